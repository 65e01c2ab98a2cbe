import type { OpenApiDocument } from '@svc/contract';
import type { RouteContext } from '../http/context.js';
import type { AccessTokens } from '../identity/auth/access-token.js';
import { authenticate, bearerToken, type Principal } from '../identity/auth/authenticate.js';
import { AuthError } from '../identity/auth/errors.js';
import { ACCESS_CHANNEL, PrincipalCache } from '../identity/auth/principal-cache.js';
import { hasGrantCredentialForm, routeSecurity } from '../identity/auth/route-security.js';
import type { Database } from '../platform/db/database.js';
import { toApiError } from '../platform/errors.js';
import { causeText, type Log } from '../platform/observe/log.js';

/** The one authentication of `/v1` and `/mcp`. */
export interface Authentication {
  /** Token, key still active, principal still there, with its memberships (one query, then cached). */
  authenticateRequest(authorization: string | null): Promise<Principal>;
  /**
   * The pipeline's `authenticate` step, before validation: a protected route answers an anonymous
   * or badly authenticated caller 401, never a validation error describing its schema; the caller it
   * finds is `c.get('principal')`.
   */
  authenticateRoute(c: RouteContext): Promise<Response | undefined>;
  /** Principals with their memberships, cached per replica for at most a second (see PrincipalCache). */
  principals: PrincipalCache;
  /** Stops listening for the database's notifications of what changed. */
  unlisten(): Promise<void>;
}

/**
 * Builds the authentication of the API from the spec's security requirements: `public` routes pass,
 * `grant` routes (`POST /auth/token`) need a credential of the form of an assertion or a sign-in
 * secret (the grant verifies it), every other route a valid access token.
 *
 * @example
 * const { authenticateRoute } = await authentication({ db, tokens, document, clock: Date.now, log });
 */
export async function authentication(options: {
  db: Database;
  tokens: AccessTokens;
  document: OpenApiDocument;
  clock: () => number;
  log: Log;
}): Promise<Authentication> {
  const { db, tokens, log } = options;
  // Who a token belongs to, with its memberships, cached per replica for at most a second and
  // invalidated by the database's notifications of what changed (see PrincipalCache).
  const principals = new PrincipalCache({ now: options.clock });
  const unlisten = await db.listen(ACCESS_CHANNEL, (payload) => principals.notified(payload), {
    onGap: () => principals.clear(),
  });

  const authenticateRequest = (authorization: string | null): Promise<Principal> =>
    authenticate(db, tokens, authorization, { cache: principals });

  const security = routeSecurity(options.document);
  const authenticateRoute = async (c: RouteContext): Promise<Response | undefined> => {
    const kind = security.get(c.operationId);
    if (kind === 'public') return undefined;
    const authorization = c.request.headers.get('authorization');
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
      c.set('principal', await authenticateRequest(authorization));
      return undefined;
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500)
        log('authentication failed', {
          request_id: c.requestId,
          operation_id: c.operationId,
          error: causeText(error),
        });
      return c.error(error.code, error.message, error.details, error.headers);
    }
  };
  return { authenticateRequest, authenticateRoute, principals, unlisten };
}
