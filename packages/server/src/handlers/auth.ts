import { bearerToken } from '../identity/auth/authenticate.js';
import { exchangeGrant, JWT_BEARER } from '../identity/auth/grants.js';
import { nestedDatabase } from '../platform/db/nested.js';
import type { AuthDeps } from './deps.js';
import type { Handler } from './types.js';

/**
 * `POST /auth/token` (design §7): exchanges the Bearer credential by the body's `grant_type`. Runs in
 * the request's transaction (`ctx.db`); the grants, which open transactions of their own, get a view
 * of it.
 */
export const exchangeToken: Handler<'exchangeToken', AuthDeps> = async (ctx) => {
  const token = await exchangeGrant(
    ctx.body?.grant_type ?? JWT_BEARER,
    {
      db: nestedDatabase(ctx.db, ctx.deps.db.engine),
      tokens: ctx.deps.tokens,
      tokenUrl: ctx.deps.config.tokenUrl,
    },
    {
      credential: bearerToken(ctx.request.headers.get('authorization')),
      codeVerifier: ctx.body?.code_verifier,
      redirectUri: ctx.body?.redirect_uri,
    },
  );
  return { status: 200, body: { token } };
};

export const authHandlers = { exchangeToken };
