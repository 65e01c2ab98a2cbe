import type { OpenApiDocument } from '@svc/contract';
import type { AccessTokens } from '../auth/access-token.js';
import { authenticate, bearerToken, type Principal } from '../auth/authenticate.js';
import { AuthError } from '../auth/errors.js';
import { ACCESS_CHANNEL, PrincipalCache } from '../auth/principal-cache.js';
import { hasGrantCredentialForm, routeSecurity } from '../auth/route-security.js';
import type { Database } from '../db/database.js';
import { toApiError } from '../errors.js';
import type { RouteStart } from '../http/pipeline.js';
import { noteRequest } from '../observe/requests.js';
import { causeText, type Log } from './log.js';

/** The one authentication of `/v1` and `/mcp`. */
export interface Authentication {
  /** Token, key still active, principal still there, with its memberships (one query, then cached). */
  authenticateRequest(authorization: string | null): Promise<Principal>;
  /**
   * The pipeline's `authenticate` step, before validation: a protected route answers an anonymous
   * or badly authenticated caller 401, never a validation error describing its schema.
   */
  authenticateRoute(start: RouteStart): Promise<Response | undefined>;
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
      const principal = await authenticateRequest(authorization);
      start.state.principal = principal;
      noteRequest(start.request, { principalId: principal.id });
      return undefined;
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500)
        log('authentication failed', {
          request_id: start.requestId,
          operation_id: start.operationId,
          error: causeText(error),
        });
      return start.error(error.code, error.message, error.details, error.headers);
    }
  };
  return { authenticateRequest, authenticateRoute, principals, unlisten };
}
