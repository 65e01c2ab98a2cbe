import { importPKCS8 } from 'jose';
import type { Token } from '../contract.js';
import { ApiError } from '../errors.js';
import type { KeyFile } from '../key-file.js';
import { type RetryLoop, sendWithRetries } from '../retry.js';
import { errorFromResponse } from '../unwrap.js';
import { signAssertion } from './assertion.js';

/**
 * Supplies the access token for each request. `forceRefresh` is true when the server has just refused
 * the previous token with 401; return a new one then (or the same, and the call fails with 401).
 *
 * @example
 * import type { GetToken } from '@svc/client';
 * let cached = 'ey...';
 * const getToken: GetToken = async ({ forceRefresh }) => (forceRefresh ? (cached = await refresh()) : cached);
 * declare function refresh(): Promise<string>;
 */
export type GetToken = (context: {
  forceRefresh: boolean;
  signal?: AbortSignal | undefined;
}) => Promise<string>;

/**
 * Where the transport gets its bearer token. `rejected` is the token a 401 just refused; a renewable
 * source then returns a different one. Only renewable sources get the one retry after a 401.
 */
export interface TokenSource {
  token(context: {
    rejected?: string | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<string | undefined>;
  readonly renewable: boolean;
}

export const noToken: TokenSource = { token: async () => undefined, renewable: false };

export function staticToken(token: string): TokenSource {
  return { token: async () => token, renewable: false };
}

export function callbackToken(getToken: GetToken): TokenSource {
  return {
    token: ({ rejected, signal }) => getToken({ forceRefresh: rejected !== undefined, signal }),
    renewable: true,
  };
}

interface KeyFileSourceOptions {
  keyFile: KeyFile;
  tokenUrl: string;
  fetch: (request: Request) => Promise<Response>;
  loop: RetryLoop;
  renewBeforeMs: number;
  userAgent: string;
}

/**
 * Exchanges signed assertions for access tokens at POST /auth/token. The token is cached and renewed
 * `renewBeforeMs` before it expires; concurrent callers share one exchange in flight.
 */
export function keyFileToken(options: KeyFileSourceOptions): TokenSource {
  const { keyFile, tokenUrl, loop } = options;
  let key: Promise<CryptoKey> | undefined;
  let cached: { accessToken: string; renewAt: number } | undefined;
  let inFlight: Promise<string> | undefined;

  async function exchange(): Promise<string> {
    key ??= importPKCS8(keyFile.private_key, keyFile.algorithm);
    const signingKey = await key;
    // Every attempt signs a new assertion: the server rejects a replayed jti (API.md §7).
    const response = await sendWithRetries(
      async () =>
        new Request(tokenUrl, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${await signAssertion(keyFile, signingKey, tokenUrl, loop.now())}`,
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'User-Agent': options.userAgent,
          },
          body: JSON.stringify({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' }),
        }),
      options.fetch,
      { canRetry: true, loop },
    );
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text; errorFromResponse reports it
    }
    if (!response.ok) throw errorFromResponse(response, body);
    const token = (body as { token?: Partial<Token> } | undefined)?.token;
    if (typeof token?.access_token !== 'string') {
      throw new ApiError('POST /auth/token answered without token.access_token', {
        status: response.status,
        code: 'invalid_response',
        details: { body: text.slice(0, 200) },
        requestId: response.headers.get('Request-Id') ?? undefined,
      });
    }
    const issued = loop.now();
    const expiresAt =
      typeof token.expires_in === 'number'
        ? issued + token.expires_in * 1000 // relative: immune to a skewed local clock
        : Date.parse(String(token.expires_at));
    cached = { accessToken: token.access_token, renewAt: expiresAt - options.renewBeforeMs };
    return token.access_token;
  }

  return {
    renewable: true,
    // The shared exchange ignores any one caller's signal: aborting one request must not fail the others.
    async token({ rejected }) {
      // Drop the cache only if it still holds the refused token; a concurrent 401 may have renewed it.
      if (rejected !== undefined && cached?.accessToken === rejected) cached = undefined;
      if (cached && loop.now() < cached.renewAt) return cached.accessToken;
      inFlight ??= exchange().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
  };
}
