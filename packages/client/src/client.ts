import type { Client } from 'openapi-fetch';
import createFetchClient from 'openapi-fetch';
import { callbackToken, type GetToken, noToken, staticToken, type TokenSource } from './auth/tokens.js';
import type { ApiMethod, ApiPaths, WithOptionalIdempotencyKey } from './contract.js';
import { DEFAULT_RETRY, type RetryLoop, type RetryOptions, realSleep, type Sleep } from './retry.js';
import { createTransport } from './transport.js';

/**
 * The client's version, sent in `User-Agent` by the Node entry (`@svc/client/node`); test/version.test.ts
 * keeps it equal to package.json.
 *
 * @example
 * import { CLIENT_VERSION } from '@svc/client';
 * const userAgent = `my-tool/1.0 svc-client/${CLIENT_VERSION}`;
 */
/** openapi-fetch's per-method calls, which {@link SvcClient} retypes with {@link ApiMethod}. */
type Verb = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE';

export const CLIENT_VERSION = '0.1.0';

/**
 * Options of {@link createClient}. Give at most one of `token`, `getToken`; none makes an anonymous
 * client, enough for `GET /health`. A service-account key file needs `createClient` from
 * `@svc/client/node`, which adds a `keyFile` option (and jose) to these.
 *
 * @example
 * import type { ClientOptions } from '@svc/client';
 * const options: ClientOptions = { baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...', retry: { maxAttempts: 2 } };
 */
export interface ClientOptions {
  /** Base address, ending in `/v1` for the real server (`http://127.0.0.1:4010` for the Prism mock). */
  baseUrl?: string;
  /** A bearer access token used as is; it is not renewed. */
  token?: string;
  /** Called before every request (cache inside it); with `forceRefresh: true` once after a 401. */
  getToken?: GetToken;
  /** The fetch to send requests with. Default `globalThis.fetch`. Tests pass a handler here. */
  fetch?: (request: Request) => Promise<Response>;
  /** Makes `Idempotency-Key` values for mutating calls that bring none. `false`: send none (such calls are then never retried). Default `crypto.randomUUID`. */
  idempotencyKey?: (() => string) | false;
  /** Retry policy for 429, 503, network errors and 409 `idempotency_key_in_use`; `false` sends each request once. */
  retry?: RetryOptions | false;
  /** Waits between attempts. Default: a real, abortable timer. */
  sleep?: Sleep;
  /** `User-Agent` to send. Default: none from `@svc/client` (a browser sends its own, and a custom one costs a CORS preflight in some browsers); `svc-client/<version>` from `@svc/client/node`. */
  userAgent?: string;
  /** Clock for token expiry and `Retry-After` dates. Default `Date.now`. */
  now?: () => number;
  /** Jitter source. Default `Math.random`. */
  random?: () => number;
}

/**
 * The typed client: openapi-fetch's `GET`/`POST`/`PUT`/`PATCH`/`DELETE` (typed by the spec's `paths`,
 * resolving to `{data, error, response}`), plus the base URL and the current access token. A required
 * `Idempotency-Key` header is optional here: the client generates one unless you pass your own.
 *
 * @example
 * import { createClient, type SvcClient } from '@svc/client';
 * const client: SvcClient = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 */
export interface SvcClient<Paths extends {} = ApiPaths>
  extends Omit<Client<WithOptionalIdempotencyKey<Paths>>, Verb> {
  GET: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'get'>;
  PUT: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'put'>;
  POST: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'post'>;
  DELETE: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'delete'>;
  OPTIONS: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'options'>;
  HEAD: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'head'>;
  PATCH: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'patch'>;
  TRACE: ApiMethod<WithOptionalIdempotencyKey<Paths>, 'trace'>;
  /** The base address, without a trailing slash. */
  readonly baseUrl: string;
  /** The access token the next request would carry (exchanging or renewing it if needed); undefined for an anonymous client. */
  accessToken(): Promise<string | undefined>;
}

/** What a token source made by an extension (the key-file auth of `@svc/client/node`) gets from the client. */
export interface TokenContext {
  baseUrl: string;
  fetch: (request: Request) => Promise<Response>;
  loop: RetryLoop;
  userAgent: string | undefined;
}

/** A credential an extension entry adds to {@link createClient}: its default base URL and its token source. */
export interface ExtraCredential {
  baseUrl?: string | undefined;
  tokens(context: TokenContext): TokenSource;
}

/**
 * Creates a client. Raw calls return openapi-fetch's `{data, error, response}` for every HTTP status
 * and reject only for a {@link NetworkError} (after retries), an abort, or a failed token exchange
 * ({@link ApiError}); wrap them in {@link unwrap} to get the body or an {@link ApiError}.
 *
 * @example
 * import { createClient, unwrap } from '@svc/client';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { workspaces } = await unwrap(client.GET('/workspaces', { params: { query: { limit: 10 } } }));
 */
export function createClient<Paths extends {} = ApiPaths>(options: ClientOptions = {}): SvcClient<Paths> {
  // A key file given here from plain JS would silently make an anonymous client: refuse it instead.
  if ((options as { keyFile?: unknown }).keyFile)
    throw new TypeError('createClient: keyFile needs @svc/client/node');
  return buildClient<Paths>(options);
}

/**
 * The client behind both entries; `extra` is a credential only an extension entry knows how to use.
 *
 * @example
 * import { buildClient } from './client.js';
 * const client = buildClient({ baseUrl: 'http://127.0.0.1:8080/v1' });
 */
export function buildClient<Paths extends {} = ApiPaths>(
  options: ClientOptions,
  extra?: ExtraCredential,
): SvcClient<Paths> {
  const baseUrl = (options.baseUrl ?? extra?.baseUrl ?? '').replace(/\/+$/, '');
  if ([options.token, options.getToken, extra].filter((x) => x !== undefined).length > 1 || !baseUrl) {
    // Short on purpose: this module is in every browser bundle.
    throw new TypeError('createClient: give baseUrl and at most one of token, getToken, keyFile');
  }
  const fetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const { userAgent } = options;
  const loop = {
    policy:
      options.retry === false ? { ...DEFAULT_RETRY, maxAttempts: 1 } : { ...DEFAULT_RETRY, ...options.retry },
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
  };
  let tokens: TokenSource = noToken;
  if (options.token !== undefined) tokens = staticToken(options.token);
  else if (options.getToken) tokens = callbackToken(options.getToken);
  else if (extra) tokens = extra.tokens({ baseUrl, fetch, loop, userAgent });

  const transport = createTransport({
    fetch,
    tokens,
    loop,
    idempotencyKey: options.idempotencyKey ?? (() => globalThis.crypto.randomUUID()),
    userAgent,
  });
  const raw = createFetchClient<WithOptionalIdempotencyKey<Paths>>({ baseUrl, fetch: transport });
  // The same calls; only their result type differs (ApiResponse: openapi-fetch's without Readable<>).
  return Object.assign(raw, { baseUrl, accessToken: () => tokens.token({}) }) as unknown as SvcClient<Paths>;
}
