import type { Client } from 'openapi-fetch';
import createFetchClient from 'openapi-fetch';
import { callbackToken, type GetToken, staticToken, type TokenSource } from './auth/tokens.js';
import type { ApiMethod, ApiPaths, WithOptionalIdempotencyKey } from './contract.js';
import { createTransport, type Send } from './transport.js';

/** openapi-fetch's per-method calls, which {@link SvcClient} retypes with {@link ApiMethod}. */
type Verb = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE';

/**
 * The client's version, sent in `User-Agent` by the Node entry (`@svc/client/node`); test/version.test.ts
 * keeps it equal to package.json.
 *
 * @example
 * import { CLIENT_VERSION } from '@svc/client';
 * const userAgent = `my-tool/1.0 svc-client/${CLIENT_VERSION}`;
 */
export const CLIENT_VERSION = '0.1.0';

/**
 * Options of {@link createClient}. Give at most one of `token`, `getToken`; none makes an anonymous
 * client, enough for `GET /health`. Retries need `createClient` from `@svc/client/retry` (or
 * `@svc/client/node`), which adds `retry`, `sleep`, `now` and `random` to these; a service-account key
 * file needs `@svc/client/node`, which adds `keyFile` (and jose).
 *
 * @example
 * import type { ClientOptions } from '@svc/client';
 * const options: ClientOptions = { baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' };
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
  /** `User-Agent` to send. Default: none from `@svc/client` (a browser sends its own, and a custom one costs a CORS preflight in some browsers); `svc-client/<version>` from `@svc/client/node`. */
  userAgent?: string;
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
  userAgent: string | undefined;
}

/**
 * What an extension entry adds to {@link createClient}: how a call's attempts are sent (retries, from
 * `@svc/client/retry`), and a credential (the key file of `@svc/client/node`) with its default base URL.
 */
export interface Extension {
  send?: Send | undefined;
  baseUrl?: string | undefined;
  tokens?: ((context: TokenContext) => TokenSource) | undefined;
}

/**
 * Creates a client that sends each request once: no retries here (they are `@svc/client/retry`'s
 * `createClient`, kept out of this entry so a browser bundle stays small). Raw calls return
 * openapi-fetch's `{data, error, response}` for every HTTP status and reject only for a
 * {@link NetworkError}, an abort, or a failed token exchange ({@link ApiError}); wrap them in
 * {@link unwrap} to get the body or an {@link ApiError}.
 *
 * @example
 * import { createClient, unwrap } from '@svc/client';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { workspaces } = await unwrap(client.GET('/workspaces', { params: { query: { limit: 10 } } }));
 */
export function createClient<Paths extends {} = ApiPaths>(options: ClientOptions = {}): SvcClient<Paths> {
  return buildClient<Paths>(options);
}

/**
 * The client behind every entry; `extra` is what only an extension entry knows how to do.
 *
 * @example
 * import { buildClient } from './client.js';
 * const client = buildClient({ baseUrl: 'http://127.0.0.1:8080/v1' });
 */
export function buildClient<Paths extends {} = ApiPaths>(
  options: ClientOptions,
  extra: Extension = {},
): SvcClient<Paths> {
  const { keyFile, retry } = options as { keyFile?: unknown; retry?: unknown };
  const baseUrl = (options.baseUrl ?? extra.baseUrl ?? '').replace(/\/+$/, '');
  if (
    [options.token, options.getToken, extra.tokens].filter((x) => x !== undefined).length > 1 ||
    !baseUrl ||
    // Given to this entry from plain JS, a key file would silently make an anonymous client, and a
    // retry policy a client that never retries: refuse both instead.
    (keyFile && !extra.tokens) ||
    (retry && !extra.send)
  ) {
    // One short message on purpose: this module is in every browser bundle.
    throw new TypeError(
      'createClient: give baseUrl and at most one of token, getToken, keyFile; keyFile needs @svc/client/node, retry @svc/client/retry',
    );
  }
  const fetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const { userAgent } = options;
  const tokens: TokenSource = options.getToken
    ? callbackToken(options.getToken)
    : extra.tokens
      ? extra.tokens({ baseUrl, fetch, userAgent })
      : staticToken(options.token);

  const transport = createTransport({
    fetch,
    tokens,
    send: extra.send,
    idempotencyKey: options.idempotencyKey ?? (() => globalThis.crypto.randomUUID()),
    userAgent,
  });
  const raw = createFetchClient<WithOptionalIdempotencyKey<Paths>>({ baseUrl, fetch: transport });
  // The same calls; only their result type differs (ApiResponse: openapi-fetch's without Readable<>).
  return Object.assign(raw, { baseUrl, accessToken: () => tokens.token({}) }) as unknown as SvcClient<Paths>;
}
