import type { OpenApiDocument } from '@svc/contract';
import { createMcpHttpHandler } from '@svc/mcp';
import type { AccessTokens } from '../auth/access-token.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { serverSecret } from '../db/secrets.js';
import { createCors } from '../http/cors.js';
import { admitRequest, createMcpRoute } from '../http/mcp-route.js';
import { apiPath, pathOf } from '../http/path.js';
import type { FetchHandler, RequestStart } from '../http/pipeline.js';
import { newRequestId } from '../http/request-id.js';
import { ClientRegistry } from '../oauth/clients.js';
import { createOAuthRoutes, OAUTH_PATHS } from '../oauth/routes.js';
import type { CounterStore } from '../ratelimit-store.js';
import { createSigninHandler } from '../signin/handler.js';
import type { Authentication } from './authentication.js';
import { clientAddress } from './rate-limits.js';

/**
 * Everything the service answers, by path: `/v1/**` (the API), `/signin/**` (browser sign-in),
 * `/mcp`, and the OAuth metadata and token routes MCP clients sign in with (anonymous, counted by the
 * `/v1` rate limits per client address). Anything else goes to the API, which answers 404.
 *
 * @example
 * const fetch = await createFront({ config, db, tokens, counters, document, api, admit: onRequest, authenticate });
 */
export async function createFront(options: {
  config: Readonly<Config>;
  db: Database;
  tokens: AccessTokens;
  counters: CounterStore;
  document: OpenApiDocument;
  /** The `/v1` core. */
  api: FetchHandler;
  /** The `/v1` rate limit (the pipeline's `onRequest`). */
  admit: (start: RequestStart) => Promise<Response | undefined>;
  authenticate: Authentication['authenticateRequest'];
}): Promise<FetchHandler> {
  const { config, db, tokens, api, admit } = options;
  // The sign-in rate limit counts per account and per client address; the address lives in the
  // adapter's env, which the handler does not see, so it is handed over per request.
  const addresses = new WeakMap<Request, string>();
  // MCP sign-in by URL: OAuth metadata, registration and token routes; codes from the browser sign-in.
  const origin = new URL(config.baseUrl).origin;
  const mcpResource = `${origin}/mcp`;
  const clients = new ClientRegistry(await serverSecret(db, 'oauth_clients'));
  const oauth = createOAuthRoutes({ db, tokens, clients, origin, resource: mcpResource });
  const signin = createSigninHandler({
    db,
    publicOrigin: origin,
    csrfSecret: await serverSecret(db, 'signin_csrf'),
    clientAddress: (request) => addresses.get(request),
    counters: options.counters,
    attempts: config.signinLimits,
    ...(config.signinHashConcurrency ? { hashConcurrency: config.signinHashConcurrency } : {}),
    authorize: { client: (id) => clients.lookup(id), resources: [mcpResource] },
  });
  const corsHeaders = createCors(options.document).responseHeaders;
  // `/mcp` shares the `/v1` rate limits, authentication and body limit (see createMcpRoute). MCP tools
  // call the API in-process, as the caller (their Bearer token is passed through), so every tool call
  // is checked and counted by `/v1` as well.
  const mcp = createMcpRoute({
    mcp: createMcpHttpHandler({
      apiBaseUrl: config.baseUrl,
      fetch: (inner) => api(inner),
      document: options.document,
      newRequestId,
    }),
    admit,
    authenticate: (authorization) => options.authenticate(authorization),
    bodyLimitBytes: config.bodyLimitBytes,
    responseHeaders: corsHeaders,
    resourceMetadataUrl: `${origin}${OAUTH_PATHS.resourceMetadata}`,
  });

  return async (request, env) => {
    const path = pathOf(request.url);
    if (apiPath(path) !== undefined) return api(request, env);
    if (path.startsWith('/signin')) {
      const address = clientAddress(env);
      if (address) addresses.set(request, address);
      return signin(request);
    }
    if (path === '/mcp') return mcp(request, env);
    if (path.startsWith('/.well-k') || path.startsWith('/oauth/')) {
      // Anonymous endpoints: counted by the /v1 rate limits per client address, like /v1/auth/token.
      const admitted = await admitRequest(admit, corsHeaders, request, env);
      if (admitted.refused) return admitted.refused;
      const answer = await oauth(request);
      if (!answer) return api(request, env);
      for (const [name, value] of Object.entries(admitted.headers)) answer.headers.set(name, value);
      return answer;
    }
    return api(request, env);
  };
}
