import type { components } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import type { WorkspaceAccess } from '../access.js';
import { ME_WORKSPACES, principalWithAccess } from '../repositories/principals.js';
import type { Role } from '../roles.js';
import type { AccessTokens } from './access-token.js';
import { AuthError } from './errors.js';

/** The caller of a request, read from the database (never from the token alone), cached ≤ 1 s per replica. */
export interface Principal {
  id: string;
  kind: components['schemas']['PrincipalKind'];
  name: string;
  display_name: string;
  email: string | null;
  /** The principal's workspaces and its role in each, newest first (at most 1000: `GET /me`). */
  workspaces?: {
    id: string;
    name: string;
    display_name: string;
    role: Role;
  }[];
  /**
   * The same memberships with the whole workspace row, for permission checks without a query
   * (`workspaceAccess`); `membershipsComplete` is false when the principal has more than listed.
   */
  memberships?: readonly Membership[];
  membershipsComplete?: boolean;
}

/**
 * The credential of an `Authorization: Bearer …` header; `AuthError('missing')` when there is none.
 *
 * @example
 * bearerToken(request.headers.get('authorization')); // 'eyJ…'
 */
export function bearerToken(header: string | null | undefined): string {
  if (!header) throw new AuthError('missing', 'this route needs Authorization: Bearer <access token>');
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(header);
  if (!match) throw new AuthError('malformed', 'the Authorization header must be "Bearer <token>"');
  return match[1] as string;
}

/** What one membership row of the principal holds: the workspace row and the principal's role there. */
export type Membership = WorkspaceAccess;

/**
 * Where {@link authenticate} may take a principal from before the database (`PrincipalCache` is one):
 * declared here, so this module needs nothing of the cache, which stores `Principal`s.
 */
export interface PrincipalSource {
  get(principalId: string, keyId: string | undefined, load: () => Promise<Principal>): Promise<Principal>;
}

/**
 * Authenticates a request: verifies the Bearer access token, then loads the principal in one query
 * (or takes it from `cache`, design §5 and `PrincipalCache`), refusing a disabled or deleted
 * principal, and a token exchanged from a key that has since been revoked or has expired. The
 * principal comes with its workspaces and its role in each, so `GET /me` and the permission checks of
 * reads need no further query.
 *
 * @example
 * const principal = await authenticate(db, accessTokens, request.headers.get('authorization'));
 */
export async function authenticate(
  db: Queryable,
  tokens: AccessTokens,
  authorization: string | null | undefined,
  options: { cache?: PrincipalSource } = {},
): Promise<Principal> {
  const claims = await tokens.verify(bearerToken(authorization));
  const load = () => loadPrincipal(db, claims.sub, claims.key_id);
  return options.cache ? options.cache.get(claims.sub, claims.key_id, load) : load();
}

/**
 * The principal `id`, its key `keyId`'s state and its memberships, in ONE statement; `AuthError` (401)
 * when the principal is gone or disabled, or the key is no longer usable.
 *
 * @example
 * const principal = await loadPrincipal(db, claims.sub, claims.key_id);
 */
export async function loadPrincipal(
  db: Queryable,
  id: string,
  keyId: string | undefined,
): Promise<Principal> {
  const row = await principalWithAccess(db, id, keyId);
  if (!row || row.disabled)
    throw new AuthError('principal_unknown', 'the principal of this token no longer exists or is disabled');
  if (row.key_ok === false)
    throw new AuthError('key_revoked', 'the key this token was issued for has been revoked or has expired');
  const memberships: Membership[] = row.memberships.map(({ role, created_at, updated_at, ...workspace }) => ({
    workspace: { ...workspace, created_at: new Date(created_at), updated_at: new Date(updated_at) },
    role,
  }));
  const complete = memberships.length <= ME_WORKSPACES;
  if (!complete) memberships.length = ME_WORKSPACES;
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    display_name: row.display_name,
    email: row.email,
    workspaces: memberships.map(({ workspace, role }) => ({
      id: workspace.id,
      name: workspace.name,
      display_name: workspace.display_name === '' ? workspace.name : workspace.display_name,
      role,
    })),
    memberships,
    membershipsComplete: complete,
  };
}
