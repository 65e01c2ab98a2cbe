import type { Token } from '@svc/client';
import type { components } from '@svc/contract';

type TokenRequest = components['schemas']['TokenRequest'];

/**
 * POST /auth/token with `Authorization: Bearer <credential>` and a `TokenRequest` body (design §7):
 * the authorization code of a browser sign-in, or a refresh token. Through `@svc/client`, so retries
 * reuse one `Idempotency-Key` (a retried exchange replays the first answer instead of spending the
 * code or rotating the refresh token twice).
 *
 * @example
 * const token = await exchangeToken({ baseUrl, credential: code, body: { grant_type: 'authorization_code', code_verifier, redirect_uri } });
 */
export async function exchangeToken(options: {
  baseUrl: string;
  credential: string;
  body: TokenRequest;
  fetch?: ((request: Request) => Promise<Response>) | undefined;
}): Promise<Token> {
  const { createClient, unwrap } = await import('@svc/client/retry');
  const client = createClient({
    baseUrl: options.baseUrl,
    token: options.credential,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const { token } = await unwrap(client.POST('/auth/token', { body: options.body }));
  return token;
}
