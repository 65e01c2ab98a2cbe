import type { OpenApiDocument, OperationId, SchemesOf } from '@svc/contract';
import { isAnonymous, listOperations, securitySchemeNames } from '@svc/contract';
import { decodeProtectedHeader } from 'jose';

/**
 * How a route is protected, read from the spec's `security` (`@svc/contract` reads it: the operation's
 * own, else the document's):
 * - `public`: `security: []` (GET /health), no credential;
 * - `access_token`: the `bearerAuth` scheme, an access token checked before anything else is read;
 * - `grant`: another scheme (POST /auth/token's `grantCredential`), a Bearer credential whose kind the
 *   body's `grant_type` names, so only its presence and form are checked before validation and the
 *   credential itself by the grant.
 */
export type RouteSecurity = 'public' | 'access_token' | 'grant';

/** The scheme of the spec that carries access tokens. */
const ACCESS_TOKEN_SCHEME = 'bearerAuth';

/**
 * The operations whose handlers run without an access token, so without a principal: the public
 * ones (`security: []`) and those whose security names another scheme (`exchangeToken`). Read from the
 * spec's types, like {@link routeSecurity} reads the document: no hand-kept list.
 *
 * @example
 * const probe: WithoutAccessToken = 'getHealth';
 */
export type WithoutAccessToken = {
  [K in OperationId]: typeof ACCESS_TOKEN_SCHEME extends SchemesOf<K> ? never : K;
}[OperationId];

/**
 * The protection of every operation of the document.
 *
 * @example
 * routeSecurity(loadDocument()).get('getHealth'); // 'public'
 */
export function routeSecurity(document: OpenApiDocument): ReadonlyMap<OperationId, RouteSecurity> {
  const result = new Map<OperationId, RouteSecurity>();
  for (const op of listOperations(document)) {
    const kind: RouteSecurity = isAnonymous(document, op)
      ? 'public'
      : securitySchemeNames(document, op).includes(ACCESS_TOKEN_SCHEME)
        ? 'access_token'
        : 'grant';
    result.set(op.operationId as OperationId, kind);
  }
  return result;
}

/** An opaque secret as browser sign-in issues them (authorization codes, refresh tokens): 32 bytes, base64url. */
const OPAQUE_SECRET = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether a grant route's Bearer credential has the form of something a grant accepts: a compact JWS
 * whose header decodes (an assertion), or an opaque sign-in secret. Checked before the body is read,
 * so a credential that no grant could accept is 401 whatever the body says; the grant verifies the rest.
 *
 * @example
 * hasGrantCredentialForm('eyJhbGciOi.garbage.x'); // false
 */
export function hasGrantCredentialForm(credential: string): boolean {
  if (OPAQUE_SECRET.test(credential)) return true;
  try {
    decodeProtectedHeader(credential);
    return credential.split('.').length === 3;
  } catch {
    return false;
  }
}
