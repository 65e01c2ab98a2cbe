// Key-file auth: jose signs the assertions. Only `@svc/client/node` imports this module, so a browser
// bundle of the main entry (static token or getToken) never carries jose.
import { importPKCS8 } from 'jose';
import type { Token } from '../contract.js';
import { ApiError } from '../errors.js';
import type { KeyFile } from '../key-file.js';
import { type RetryLoop, sendWithRetries } from '../retry.js';
import { errorFromResponse } from '../unwrap.js';
import { signAssertion } from './assertion.js';
import type { TokenSource } from './tokens.js';

export interface KeyFileSourceOptions {
  keyFile: KeyFile;
  tokenUrl: string;
  fetch: (request: Request) => Promise<Response>;
  loop: RetryLoop;
  renewBeforeMs: number;
  userAgent: string | undefined;
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
    // Every attempt signs a new assertion: the server rejects a replayed jti (design §7).
    const response = await sendWithRetries(
      async () =>
        new Request(tokenUrl, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${await signAssertion(keyFile, signingKey, tokenUrl, loop.now())}`,
            'Content-Type': 'application/json',
            Accept: 'application/json',
            ...(options.userAgent && { 'User-Agent': options.userAgent }),
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
