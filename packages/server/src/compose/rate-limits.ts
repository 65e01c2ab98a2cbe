import type { RequestContext } from '../http/context.js';
import type { NodeEnv } from '../http/node-env.js';
import type { AccessTokens } from '../identity/auth/access-token.js';
import type { RateLimiter, RateLimitState } from '../platform/ratelimit.js';
import { RateLimitError, rateLimitHeaders } from '../platform/ratelimit.js';

/** The principal rate limit of `/v1`, `/mcp` and the OAuth routes (design §11). */
export interface RateLimiting {
  /**
   * The pipeline's `onRequest`: every request counts, early errors included; the `RateLimit` headers
   * go on whatever the request answers, where the count stands is `c.get('rateLimit')`, and a request
   * over the limit is answered 429 here.
   */
  onRequest(c: RequestContext): Promise<Response | undefined>;
}

/**
 * Builds the principal rate limit; with no limiter (`SVC_RATE_LIMITS=off`) nothing is counted.
 *
 * @example
 * const { onRequest } = rateLimiting(deps.limiter, deps.tokens);
 */
export function rateLimiting(limiter: RateLimiter | undefined, tokens: AccessTokens): RateLimiting {
  const rateLimitKey = async (request: Request, env: NodeEnv | undefined): Promise<string> => {
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
  // The principal policy for one request: counted by the token's subject when it verifies (signature
  // only; the database check comes later), else by the client's address. Throws `RateLimitError` (429).
  const limitRequest = async (
    request: Request,
    env: NodeEnv | undefined,
  ): Promise<RateLimitState | undefined> => limiter?.take('principal', await rateLimitKey(request, env));

  const onRequest = async (c: RequestContext): Promise<Response | undefined> => {
    if (!limiter) return undefined;
    try {
      const state = await limitRequest(c.request, c.env);
      c.set('rateLimit', state);
      Object.assign(c.headers, rateLimitHeaders([state]));
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimitError)) throw error;
      return c.error(error.code, error.message, error.details, error.headers);
    }
  };
  return { onRequest };
}

/** The client's address from the Node adapter's `env`, when there is one. */
export function clientAddress(env: NodeEnv | undefined): string | undefined {
  return env?.incoming.socket?.remoteAddress;
}
