import { verifyAssertion } from '../auth/assertion.js';
import { bearerToken } from '../auth/authenticate.js';
import { exchangeAuthorizationCode, exchangeRefreshToken } from '../auth/grants.js';
import { nestedDatabase } from '../db/nested.js';
import type { Handler } from './types.js';

/** The default grant (RFC 7523): the Bearer credential is a signed assertion. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * `POST /auth/token` (design §7): dispatches on the body's `grant_type`. Runs in the request's
 * transaction (`ctx.db`); the grants, which open transactions of their own, get a view of it.
 */
export const exchangeToken: Handler<'exchangeToken'> = async (ctx) => {
  const credential = bearerToken(ctx.request.headers.get('authorization'));
  const db = nestedDatabase(ctx.db, ctx.deps.db.engine);
  const grant = ctx.body?.grant_type ?? JWT_BEARER;
  const { tokens } = ctx.deps;
  if (grant === 'authorization_code') {
    const token = await exchangeAuthorizationCode(
      { db, tokens },
      { code: credential, codeVerifier: ctx.body?.code_verifier, redirectUri: ctx.body?.redirect_uri },
    );
    return { status: 200, body: { token } };
  }
  if (grant === 'refresh_token') {
    return {
      status: 200,
      body: { token: await exchangeRefreshToken({ db, tokens }, { refreshToken: credential }) },
    };
  }
  const { principalId, keyId } = await verifyAssertion(db, credential, {
    tokenUrl: ctx.deps.config.tokenUrl,
  });
  return { status: 200, body: { token: await tokens.issue(principalId, { keyId }) } };
};

export const authHandlers = { exchangeToken };
