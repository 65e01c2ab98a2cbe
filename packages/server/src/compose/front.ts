import type { OpenApiDocument } from '@svc/contract';
import { createMcpHttpHandler } from '@svc/mcp';
import { type ContextHandler, fetchHandler, type RequestContext } from '../http/context.js';
import { createCors } from '../http/cors.js';
import { createDocsPage } from '../http/docs-page.js';
import { createMcpRoute } from '../http/mcp-route.js';
import type { NodeEnv } from '../http/node-env.js';
import type { AccessTokens } from '../identity/auth/access-token.js';
import { ClientRegistry } from '../identity/oauth/clients.js';
import { createOAuthRoutes, OAUTH_PATHS } from '../identity/oauth/routes.js';
import { createSigninHandler } from '../identity/signin/handler.js';
import type { Database } from '../platform/db/database.js';
import type { CounterStore } from '../platform/ratelimit-store.js';
import { serverSecret } from '../platform/repositories/server-secrets.js';
import { newRequestId } from '../platform/request-id.js';
import type { Authentication } from './authentication.js';
import type { Config } from './config.js';
import { clientAddress } from './rate-limits.js';

/**
 * Everything the service answers, by path: `/v1/**` (the API), `/signin/**` (browser sign-in),
 * `/mcp`, the OAuth metadata and token routes MCP clients sign in with (anonymous, counted by the
 * `/v1` rate limits per client address), and the API reference at `/docs` (`/` points there). Anything
 * else goes to the API, which answers 404.
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
  api: ContextHandler;
  /** The `/v1` rate limit (the pipeline's `onRequest`). */
  admit: (c: RequestContext) => Promise<Response | undefined>;
  authenticate: Authentication['authenticateRequest'];
}): Promise<ContextHandler> {
  const { config, db, tokens, api, admit } = options;
  // MCP sign-in by URL: OAuth metadata, registration and token routes; codes from the browser sign-in.
  const origin = new URL(config.baseUrl).origin;
  const mcpResource = `${origin}/mcp`;
  const clients = new ClientRegistry(await serverSecret(db, 'oauth_clients'));
  const oauth = createOAuthRoutes({ db, tokens, clients, origin, resource: mcpResource });
  const signin = createSigninHandler<NodeEnv>({
    db,
    publicOrigin: origin,
    csrfSecret: await serverSecret(db, 'signin_csrf'),
    // The sign-in rate limit counts per account and per client address, from the adapter's env.
    clientAddress: (_request, env) => clientAddress(env),
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
      fetch: fetchHandler(api),
      document: options.document,
      newRequestId,
    }),
    admit,
    authenticate: (authorization) => options.authenticate(authorization),
    bodyLimitBytes: config.bodyLimitBytes,
    responseHeaders: corsHeaders,
    resourceMetadataUrl: `${origin}${OAUTH_PATHS.resourceMetadata}`,
  });

  const docs = createDocsPage();

  return async (c) => {
    if (c.apiPath !== undefined) return api(c);
    const path = c.path;
    if (path === '/' || path.startsWith('/docs')) return (await docs(c.request)) ?? api(c);
    if (path.startsWith('/signin')) return signin(c.request, c.env);
    if (path === '/mcp') return mcp(c);
    if (path.startsWith('/.well-k') || path.startsWith('/oauth/')) {
      // Anonymous endpoints: counted by the /v1 rate limits per client address, like /v1/auth/token.
      c.cors = corsHeaders;
      const refused = await admit(c);
      if (refused) return refused;
      const answer = await oauth(c.request);
      if (!answer) return api(c);
      for (const [name, value] of Object.entries(c.headers)) answer.headers.set(name, value);
      return answer;
    }
    return api(c);
  };
}
