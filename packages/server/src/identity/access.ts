import type { WorkspacePermission } from '@svc/contract';
import type { Queryable } from '../platform/db/database.js';
import { ApiError } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { type ReachRow, reachOf } from './repositories/members.js';
import { type WorkspaceRow, workspaceWithRole } from './repositories/workspaces.js';
import type { Role } from './roles.js';

// Weakest first. Keyed by the spec's enum, so a role added to the spec does not compile until ranked
// here; test/spec-drift.test.ts checks the order against the spec's (strongest first).
const RANK: Readonly<Record<Role, number>> = { viewer: 0, editor: 1, admin: 2, owner: 3 };

/**
 * What a request needs to do in a workspace (design §8): the roles an operation's `x-svc.permission`
 * may name in the spec, so a permission added there does not compile until {@link NEEDS} gives its role.
 */
export type Permission = WorkspacePermission;

/** The weakest role that holds each permission (design §8). */
export const NEEDS: Readonly<Record<Permission, Role>> = {
  read: 'viewer',
  computers: 'editor',
  exec: 'editor',
  manage: 'admin',
  owner: 'owner',
};

/** Whether `role` has `permission` (design §8), for what a handler shows rather than refuses. */
export function allows(role: Role, permission: Permission): boolean {
  return atLeast(role, NEEDS[permission]);
}

/** The workspace a request names, and the caller's current role in it. */
export interface WorkspaceAccess {
  workspace: WorkspaceRow;
  role: Role;
}

/** Whether `role` is at least `other`. */
export function atLeast(role: Role, other: Role): boolean {
  return RANK[role] >= RANK[other];
}

/** 404 `not_found` for a workspace, the same whether it does not exist or the caller is no member. */
function workspaceNotFound(ref: string): ApiError {
  return new ApiError('not_found', `workspace ${ref} not found`);
}

/** 403 `permission_denied` naming the role that is needed. */
export function permissionDenied(role: Role, needed: string): ApiError {
  return new ApiError('permission_denied', `your role ${role} does not allow this: it needs ${needed}`);
}

/**
 * Whose permission {@link workspaceAccess} checks, and what it may take as known. On a read, the
 * caller's memberships as authenticated (at most a second old, see `PrincipalCache`), so the check
 * needs no query: the `Principal` itself is one. On a mutation, the caller's `id` alone, so the check
 * reads the current membership in the mutation's transaction. Handlers pass `ctx.access`, which the
 * dispatcher fills so.
 */
export interface Access {
  id: string;
  /** The caller's memberships, newest first; absent: read the current membership. */
  memberships?: readonly WorkspaceAccess[] | undefined;
  /** Whether `memberships` lists all of them; if not, a workspace missing from the list is looked up. */
  membershipsComplete?: boolean | undefined;
}

/**
 * Resolves `{workspace}` (an id, or else a name) and the caller's role there: from the memberships
 * `caller` carries (a read), else from CURRENT membership in one query. Not a member (or no such
 * workspace) → 404 `not_found`, so existence never leaks; a member whose role is too weak → 403
 * `permission_denied` (design §8). `lock` takes a row lock on the workspace, serialising changes that
 * check invariants (the last owner, live computers), and always reads the current membership.
 *
 * @example
 * const { workspace, role } = await workspaceAccess(tx, ctx.access, ctx.path.workspace, 'computers');
 */
export async function workspaceAccess(
  db: Queryable,
  caller: Access,
  ref: string,
  permission: Permission,
  options: { lock?: boolean } = {},
): Promise<WorkspaceAccess> {
  const known = caller.memberships;
  if (known && !options.lock) {
    const byId = isId(ref);
    const hit = known.find((m) => (byId ? m.workspace.id : m.workspace.name) === ref);
    if (hit) return allowed({ workspace: { ...hit.workspace }, role: hit.role }, permission);
    if (caller.membershipsComplete) throw workspaceNotFound(ref);
  }
  const row = await workspaceWithRole(db, caller.id, ref, options);
  if (!row) throw workspaceNotFound(ref);
  const { role, ...workspace } = row;
  return allowed({ workspace, role }, permission);
}

function allowed(access: WorkspaceAccess, permission: Permission): WorkspaceAccess {
  const needed = NEEDS[permission];
  if (!atLeast(access.role, needed)) throw permissionDenied(access.role, needed);
  return access;
}

/**
 * What acting on a principal's credentials needs in EVERY workspace where it holds a role: `read`
 * (list its keys) needs membership there; `match` (create or revoke its keys, delete it) needs at
 * least the principal's own role there. Whoever holds a service account's
 * key acts with all its roles, so handing one out (or changing one) must never give the caller more
 * than the caller already has anywhere.
 */
export type ReachNeed = 'read' | 'match';

/**
 * Refuses (403 `permission_denied`) when the caller does not cover the principal's roles: for each
 * workspace where `principalId` is a member, the caller must be a member too (`read`) and, for
 * `match`, hold at least the principal's role there. A workspace where the caller is no member is
 * never named, so nothing about it leaks. A service account's route loads the same rows with the
 * account in one statement (`serviceAccountWithReach`) and judges them with {@link judgeReach}.
 *
 * @example
 * await checkReach(ctx.db, ctx.principal.id, account.id, 'match'); // before deleting it
 */
export async function checkReach(
  db: Queryable,
  callerId: string,
  principalId: string,
  need: ReachNeed,
): Promise<void> {
  judgeReach(await reachOf(db, principalId, callerId), need);
}

/**
 * The judgement of {@link checkReach} over rows already loaded.
 *
 * @example
 * judgeReach(reach, 'read'); // throws 403 permission_denied when the caller falls short
 */
export function judgeReach(rows: readonly ReachRow[], need: ReachNeed): void {
  for (const row of rows) {
    if (row.caller_role === null)
      throw new ApiError(
        'permission_denied',
        'this principal holds a role in a workspace you are not a member of: only someone who holds its roles everywhere may manage its credentials',
      );
    if (need === 'match' && !atLeast(row.caller_role, row.role))
      throw permissionDenied(
        row.caller_role,
        `${row.role} in workspace ${row.name}, where this principal is ${row.role}`,
      );
  }
}
