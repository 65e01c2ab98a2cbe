import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { loadDocument } from '@svc/contract';
import { createMcpHttpHandler } from '@svc/mcp';
import { AccessTokens } from './auth/access-token.js';
import { authenticate, bearerToken, type Principal } from './auth/authenticate.js';
import { AuthError } from './auth/errors.js';
import { PrincipalCache } from './auth/principal-cache.js';
import { hasGrantCredentialForm, routeSecurity } from './auth/route-security.js';
import { loadSecretKey } from './auth/secret-key.js';
import { ServerKeys } from './auth/signing-keys.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { openDatabase } from './db/open.js';
import { serverSecret } from './db/secrets.js';
import { toApiError } from './errors.js';
import { authHandlers } from './handlers/auth.js';
import { catalogHandlers } from './handlers/catalog.js';
import { computerHandlers } from './handlers/computers.js';
import { healthHandlers } from './handlers/health.js';
import { identityHandlers } from './handlers/identity.js';
import { keyHandlers } from './handlers/keys.js';
import { memberHandlers } from './handlers/members.js';
import { operationHandlers } from './handlers/operations.js';
import { serviceAccountHandlers } from './handlers/service-accounts.js';
import type { AppDeps, Handlers } from './handlers/types.js';
import { workspaceHandlers } from './handlers/workspaces.js';
import { housekeeping } from './housekeeping.js';
import { createCors } from './http/cors.js';
import { admitRequest, createMcpRoute } from './http/mcp-route.js';
import type { FetchHandler, HandlerContext, RequestStart, RouteStart } from './http/pipeline.js';
import { createHttpCore } from './http/pipeline.js';
import { newRequestId } from './http/request-id.js';
import { compileRouter } from './http/router.js';
import { compileValidator } from './http/validation.js';
import type { StoredResponse } from './idempotency.js';
import { requestFingerprint, runIdempotent } from './idempotency.js';
import { ClientRegistry } from './oauth/clients.js';
import { createOAuthRoutes, OAUTH_PATHS } from './oauth/routes.js';
import type { ComputerDriver } from './operations/driver.js';
import { OperationEvents } from './operations/events.js';
import { SimulatedDriver } from './operations/simulated-driver.js';
import { OperationWorker } from './operations/worker.js';
import { Cursors, loadCursorSecret } from './paging.js';
import type { RateLimitState } from './ratelimit.js';
import { RateLimitError, RateLimiter, rateLimitHeaders } from './ratelimit.js';
import { counterStore } from './ratelimit-store.js';
import { createSigninHandler } from './signin/handler.js';

/**
 * One handler per operation of the spec. A spec operation without a handler here is a type error
 * (`Handlers` is keyed by the generated `OperationId`).
 */
const handlers: Handlers = {
  ...healthHandlers,
  ...authHandlers,
  ...identityHandlers,
  ...workspaceHandlers,
  ...memberHandlers,
  ...serviceAccountHandlers,
  ...keyHandlers,
  ...computerHandlers,
  ...operationHandlers,
  ...catalogHandlers,
};

/** What to do with a response that breaks the spec: nothing (production), log it (dev), throw (tests). */
export type ResponseValidation = 'off' | 'log' | 'throw';

export interface AppOptions {
  config: Readonly<Config>;
  /** An open, migrated database; by default the configured one is opened (and closed by `close`). */
  db?: Database;
  /** Runs computers; by default the simulated driver with `config.simStepMs`. */
  driver?: ComputerDriver;
  /** Milliseconds since the epoch; injectable for tests (tokens). Rate limits count in real time. */
  clock?: () => number;
  responseValidation?: ResponseValidation;
  /** How often housekeeping runs (default 5 minutes). */
  housekeepingMs?: number;
  /** Where problems are reported (500s, response violations, housekeeping failures). Default: stderr. */
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** The server as a value: its web-standard `fetch`, and the parts tests and `main` reach for. */
export interface App {
  /** Everything the service answers: `/v1/**` (the API), `/signin/**` and `/mcp`. */
  fetch: FetchHandler;
  db: Database;
  deps: AppDeps;
  worker: OperationWorker;
  /** Starts the operation worker and housekeeping. */
  start(): Promise<void>;
  /** Stops them and closes the database if the app opened it. */
  close(): Promise<void>;
}

const API_PREFIX = '/v1/';

const defaultLog = (message: string, fields?: Record<string, unknown>) =>
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), message, ...fields })}\n`);

/**
 * Wires the server: routing and validation from the bundled spec, authentication (Bearer on every
 * route but `/health`; `POST /auth/token` exchanges its credential by `grant_type`), rate limits with
 * `RateLimit` headers on every response (early errors included, through the pipeline's `onRequest`),
 * idempotency on every mutating route (the handler's writes and the key's record in one transaction),
 * the operation worker, housekeeping, browser sign-in under `/signin` and MCP at `/mcp`.
 *
 * @example
 * const app = await createApp({ config: loadConfig({ PORT: '0' }, { sandbox: true }) });
 * await app.start();
 * const response = await app.fetch(new Request('http://127.0.0.1/v1/health'));
 * await app.close();
 */
export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const clock = options.clock ?? Date.now;
  const log = options.log ?? defaultLog;
  const ownsDb = !options.db;
  const db = options.db ?? (await openDatabase(config));
  const document = loadDocument();
  // Sealed at rest under a key from outside the database: SVC_SECRET_KEY, else the key file beside
  // the data directory. A database that dies with the process (PGlite in memory) needs neither.
  const persistent = config.databaseUrl !== undefined || config.dataDir !== undefined;
  const serverKeys = new ServerKeys(db, persistent || config.secretKey ? loadSecretKey(config) : undefined);
  // Created (or loaded) now: exchanging a token inside a transaction must not need the database for it.
  await serverKeys.signingKey();
  const tokens = new AccessTokens(serverKeys, { baseUrl: config.baseUrl, now: clock });
  // Counters every replica shares (PostgreSQL), or in memory on PGlite: rate limits and sign-in throttles.
  const counters = counterStore(db);
  const limiter = config.rateLimits ? new RateLimiter(config.rateLimits, counters) : undefined;
  const events = new OperationEvents();
  const deps: AppDeps = {
    db,
    config,
    tokens,
    serverKeys,
    limiter,
    events,
    cursors: new Cursors(await loadCursorSecret(db)),
    version: document.info.version,
  };
  const worker = new OperationWorker({
    db,
    driver: options.driver ?? new SimulatedDriver({ stepMs: config.simStepMs }),
    events,
    leaseMs: config.operationLeaseMs,
    concurrency: config.operationConcurrency,
  });
  const router = compileRouter(document);
  const validator = compileValidator(document, config.bodyLimitBytes);
  const validation = options.responseValidation ?? 'off';

  /**
   * The principal policy for one request of `/v1` (and `/mcp`, which calls this same function):
   * counted by the token's subject when it verifies (signature only; the database check comes
   * later), else by the client's address. Throws `RateLimitError` (429) when over.
   */
  const limitRequest = async (request: Request, env: unknown): Promise<RateLimitState | undefined> =>
    limiter?.take('principal', await rateLimitKey(request, env));

  const onRequest = async (start: RequestStart): Promise<Response | undefined> => {
    if (!limiter) return undefined;
    // Every request counts, early errors included.
    try {
      const state = await limitRequest(start.request, start.env);
      start.state.rateLimits = [state];
      Object.assign(start.headers, rateLimitHeaders([state]));
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimitError)) throw error;
      return start.error(error.code, error.message, error.details, error.headers);
    }
  };

  const rateLimitKey = async (request: Request, env: unknown): Promise<string> => {
    const authorization = request.headers.get('authorization');
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    if (token) {
      try {
        return `principal:${(await tokens.verify(token)).sub}`;
      } catch {
        // not an access token (an assertion, or garbage): counted by address below
      }
    }
    return `address:${clientAddress(env) ?? 'unknown'}`;
  };
  deps.limitRequest = limitRequest;

  // Only the embedded engine: every write comes through this process (see PrincipalCache).
  const principals = db.engine === 'pglite' ? new PrincipalCache({ now: clock }) : undefined;

  /** The one authentication of `/v1` and `/mcp`: token, key still active, principal still there. */
  const authenticateRequest = (authorization: string | null, workspaces = false): Promise<Principal> => {
    const load = () => authenticate(db, tokens, authorization, { workspaces });
    return principals ? principals.get(`${workspaces ? 'me' : 'principal'} ${authorization}`, load) : load();
  };

  // Authentication runs before validation (pipeline `authenticate`): a protected route answers an
  // anonymous or badly authenticated caller 401, never a validation error describing its schema.
  const security = routeSecurity(document);
  const authenticateRoute = async (start: RouteStart): Promise<Response | undefined> => {
    const kind = security.get(start.operationId);
    if (kind === 'public') return undefined;
    const authorization = start.request.headers.get('authorization');
    try {
      if (kind === 'grant') {
        // The grant (named in the body) verifies the credential; here it must be present and have the
        // form of an assertion or a sign-in secret.
        if (!hasGrantCredentialForm(bearerToken(authorization)))
          throw new AuthError(
            'malformed',
            'the credential is neither a signed assertion nor a sign-in token',
          );
        return undefined;
      }
      start.state.principal = await authenticateRequest(authorization, start.operationId === 'getMe');
      return undefined;
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500)
        log('authentication failed', {
          request_id: start.requestId,
          operation_id: start.operationId,
          error: String((error.cause as Error | undefined)?.stack ?? error.cause ?? error.stack),
        });
      return start.error(error.code, error.message, error.details, error.headers);
    }
  };

  const handle = async (ctx: HandlerContext): Promise<Response> => {
    const principal = ctx.state.principal as Principal | undefined;
    // Anything a mutating request changes may change who someone is or what they may do.
    if (principals && ctx.request.method !== 'GET' && ctx.request.method !== 'HEAD') {
      try {
        return await handleAuthenticated(ctx, principal);
      } finally {
        principals.invalidate();
      }
    }
    return handleAuthenticated(ctx, principal);
  };

  const handleAuthenticated = async (
    ctx: HandlerContext,
    principal: Principal | undefined,
  ): Promise<Response> => {
    const operationId = ctx.operationId;
    const states = (ctx.state.rateLimits as (RateLimitState | undefined)[] | undefined) ?? [];
    const base = {
      operationId,
      requestId: ctx.requestId,
      request: ctx.request,
      path: ctx.input.params,
      query: ctx.input.query,
      body: ctx.input.body,
      principal,
      deps,
      clientAddress: clientAddress(ctx.env),
      async countMutation(workspaceId: string) {
        const state = await limiter?.take('workspace_mutations', workspaceId);
        Object.assign(ctx.headers, rateLimitHeaders([...states, state]));
        return state;
      },
    };
    // Each handler was checked against its own operation's types above; here they are dispatched alike.
    const handler = handlers[operationId] as unknown as (ctx: unknown) => Promise<StoredResponse>;
    const shape = validator.shape(operationId);
    if (shape.idempotencyKey === 'none') {
      const reply = await handler({ ...base, db });
      return ctx.json(reply.status, reply.body, reply.headers);
    }
    // Checked once, by request validation against the spec's `Idempotency-Key` parameter: present when
    // required (else 400 `idempotency_key_required`), 1–255 printable ASCII (else 400 `invalid_argument`).
    const key = ctx.input.headers['Idempotency-Key'];
    const url = new URL(ctx.request.url);
    const credential = operationId === 'exchangeToken' ? credentialScope(ctx.request) : undefined;
    const scope =
      key === undefined
        ? undefined
        : {
            // Keys are per principal (design §10); a token exchange has none yet, so its key space is
            // the credential's: only its holder can replay the answer.
            principalId: credential ?? (principal?.id as string),
            key,
            fingerprint: requestFingerprint({
              method: ctx.request.method,
              path: url.pathname,
              query: url.search,
              body: ctx.input.body,
            }),
            requestId: ctx.requestId,
          };
    const outcome = await runIdempotent(db, scope, async (tx) => {
      try {
        return await handler({ ...base, db: tx });
      } catch (error) {
        // A refused credential still commits what the refusal did (a replayed refresh token revokes
        // its family), so it is answered, not thrown; its idempotency record is dropped below.
        if (operationId === 'exchangeToken' && error instanceof AuthError)
          return { status: 401, headers: error.headers, body: error.toEnvelope(ctx.requestId) };
        throw error;
      }
    });
    if (outcome.status === 401 && scope && !outcome.replayed) {
      await db.query('DELETE FROM idempotency_keys WHERE principal_id = $1 AND key = $2', [
        scope.principalId,
        scope.key,
      ]);
    }
    let body = outcome.body;
    if (outcome.replayed && outcome.status >= 400) body = withRequestId(body, ctx.requestId);
    return ctx.json(outcome.status, body, {
      ...outcome.headers,
      ...(outcome.replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
  };

  const core = createHttpCore({
    document,
    router,
    validator,
    onRequest,
    authenticate: authenticateRoute,
    handle,
    refineFailure: (operationId, failure) =>
      operationId === 'exchangeToken' && failure.violations.some((v) => v.field === 'grant_type')
        ? { kind: 'invalid_request', message: 'unknown grant_type' }
        : undefined,
    onError(thrown, ctx) {
      const error = toApiError(thrown);
      if (error.status >= 500)
        log('request failed', {
          request_id: ctx.requestId,
          operation_id: ctx.operationId,
          error: String((error.cause as Error | undefined)?.stack ?? error.cause ?? error.stack),
        });
      return ctx.error(error.code, error.message, error.details, error.headers);
    },
    ...(validation === 'off'
      ? {}
      : {
          onResponseViolation(ctx, status, found) {
            // With SVC_RATE_LIMITS=off (load and contract runs) there is no policy to announce: the
            // RateLimit headers the spec requires are absent on purpose.
            const violations = limiter ? found : found.filter((v) => !v.field.startsWith('header.RateLimit'));
            if (violations.length === 0) return;
            const text = `${ctx.operationId} answered ${status} against the spec: ${JSON.stringify(violations)}`;
            if (validation === 'throw') throw new Error(text);
            log('response violates the spec', { request_id: ctx.requestId, detail: text });
          },
        }),
  });

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
    counters,
    attempts: config.signinLimits,
    ...(config.signinHashConcurrency ? { hashConcurrency: config.signinHashConcurrency } : {}),
    authorize: { client: (id) => clients.lookup(id), resources: [mcpResource] },
  });
  const api = core;
  const corsHeaders = createCors(document).responseHeaders;
  // `/mcp` shares the `/v1` rate limits, authentication and body limit (see createMcpRoute). MCP tools
  // call the API in-process, as the caller (their Bearer token is passed through), so every tool call
  // is checked and counted by `/v1` as well.
  const mcp = createMcpRoute({
    mcp: createMcpHttpHandler({
      apiBaseUrl: config.baseUrl,
      fetch: (inner) => api(inner),
      document,
      newRequestId,
    }),
    admit: onRequest,
    authenticate: (authorization) => authenticateRequest(authorization),
    bodyLimitBytes: config.bodyLimitBytes,
    responseHeaders: corsHeaders,
    resourceMetadataUrl: `${origin}${OAUTH_PATHS.resourceMetadata}`,
  });

  const fetch: FetchHandler = async (request, env) => {
    const url = request.url;
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    const path = url.slice(pathStart, pathStart + 8);
    if (path.startsWith(API_PREFIX)) return api(request, env);
    if (path.startsWith('/signin')) {
      const address = clientAddress(env);
      if (address) addresses.set(request, address);
      return signin(request);
    }
    if (path === '/mcp' || path.startsWith('/mcp?')) return mcp(request, env);
    if (path.startsWith('/.well-k') || path.startsWith('/oauth/')) {
      // Anonymous endpoints: counted by the /v1 rate limits per client address, like /v1/auth/token.
      const admitted = await admitRequest(onRequest, corsHeaders, request, env);
      if (admitted.refused) return admitted.refused;
      const answer = await oauth(request);
      if (!answer) return api(request, env);
      for (const [name, value] of Object.entries(admitted.headers)) answer.headers.set(name, value);
      return answer;
    }
    return api(request, env);
  };

  let timer: NodeJS.Timeout | undefined;
  let started = false;
  return {
    fetch,
    db,
    deps,
    worker,
    async start() {
      if (started) return;
      started = true;
      await worker.start();
      timer = setInterval(
        () => {
          housekeeping(db).catch((error: unknown) => log('housekeeping failed', { error: String(error) }));
        },
        options.housekeepingMs ?? 5 * 60_000,
      );
      timer.unref();
    },
    async close() {
      clearInterval(timer);
      if (started) await worker.stop();
      started = false;
      if (ownsDb) await db.close();
    },
  };
}

function clientAddress(env: unknown): string | undefined {
  return (env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.remoteAddress;
}

/** The idempotency scope of a token exchange: a hash of the presented credential. */
function credentialScope(request: Request): string {
  const authorization = request.headers.get('authorization') ?? '';
  return `credential:${createHash('sha256').update(authorization).digest('hex')}`;
}

/** A replayed error keeps its stored answer, but names this request (`request_id` = `Request-Id`). */
function withRequestId(body: unknown, requestId: string): unknown {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  return error ? { error: { ...error, request_id: requestId } } : body;
}
