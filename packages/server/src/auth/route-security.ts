import type { OpenApiDocument, OperationId } from '@svc/contract';
import { listOperations } from '@svc/contract';
import { decodeProtectedHeader } from 'jose';

/**
 * How a route is protected, read from the spec's `security`:
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
 * The protection of every operation of the document (an operation's own `security`, else the
 * document's).
 *
 * @example
 * routeSecurity(loadDocument()).get('getHealth'); // 'public'
 */
export function routeSecurity(document: OpenApiDocument): ReadonlyMap<OperationId, RouteSecurity> {
  const global = (document as { security?: Record<string, unknown>[] }).security ?? [];
  const result = new Map<OperationId, RouteSecurity>();
  for (const op of listOperations(document)) {
    const requirements = (op.operation.security as Record<string, unknown>[] | undefined) ?? global;
    const schemes = requirements.flatMap((requirement) => Object.keys(requirement));
    const kind: RouteSecurity =
      schemes.length === 0 ? 'public' : schemes.includes(ACCESS_TOKEN_SCHEME) ? 'access_token' : 'grant';
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
