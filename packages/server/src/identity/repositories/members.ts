import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import { ownerPage } from '../../platform/repositories/keyset.js';
import type { Role } from '../roles.js';

/** A `members` row joined with its principal's kind. */
export interface MemberRow {
  id: string;
  workspace_id: string;
  principal_id: string;
  principal_kind: Schema<'PrincipalKind'>;
  role: Role;
  created_at: Date;
  updated_at: Date;
}

/** One workspace where a principal holds a role, with the caller's role there (`null`: no member). */
export interface ReachRow {
  name: string;
  role: Role;
  caller_role: Role | null;
}

const COLUMNS =
  'm.id, m.workspace_id, m.principal_id, p.kind AS principal_kind, m.role, m.created_at, m.updated_at';
const FROM = 'members m JOIN principals p ON p.id = m.principal_id';

/** A member of the workspace by id; 404 `not_found` otherwise. */
export async function memberIn(db: Queryable, workspaceId: string, memberId: string): Promise<MemberRow> {
  const { rows } = await db.query<MemberRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE m.workspace_id = $1 AND m.id = $2`,
    [workspaceId, memberId],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `member ${memberId} not found in this workspace`);
  return row;
}

/** One page of a workspace's members, newest first. */
export async function listMemberRows(
  db: Queryable,
  workspaceId: string,
  page: { after: string | null; limit: number },
): Promise<MemberRow[]> {
  const keyset = ownerPage('m.workspace_id', '$1', 'm.id');
  const { rows } = await db.query<MemberRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE ${keyset.where} AND ($2::text IS NULL OR m.id < $2)
      ORDER BY ${keyset.order} LIMIT $3`,
    [workspaceId, page.after, page.limit],
  );
  return rows;
}

/** Makes the creator of a new workspace its owner. */
export async function insertOwner(
  db: Queryable,
  member: { id: string; workspaceId: string; principalId: string },
): Promise<void> {
  await db.query(`INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')`, [
    member.id,
    member.workspaceId,
    member.principalId,
  ]);
}

/** Adds a member; `false` when the principal is already a member of the workspace. */
export async function insertMember(
  db: Queryable,
  member: { id: string; workspaceId: string; principalId: string; role: Role },
): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workspace_id, principal_id) DO NOTHING`,
    [member.id, member.workspaceId, member.principalId, member.role],
  );
  return inserted.rowCount === 1;
}

/** Adds the membership of a new service account in its owning workspace (its role there). */
export async function insertServiceAccountMember(
  db: Queryable,
  member: { id: string; workspaceId: string; principalId: string; role: Role },
): Promise<void> {
  await db.query('INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, $4)', [
    member.id,
    member.workspaceId,
    member.principalId,
    member.role,
  ]);
}

/** Changes a member's role, by member id. */
export async function setMemberRole(db: Queryable, memberId: string, role: Role): Promise<void> {
  await db.query('UPDATE members SET role = $2, updated_at = now() WHERE id = $1', [memberId, role]);
}

/** Changes a principal's role in a workspace. */
export async function setRoleIn(
  db: Queryable,
  workspaceId: string,
  principalId: string,
  role: Role,
): Promise<void> {
  await db.query(
    'UPDATE members SET role = $3, updated_at = now() WHERE workspace_id = $1 AND principal_id = $2',
    [workspaceId, principalId, role],
  );
}

/** Removes one membership. */
export async function deleteMemberRow(db: Queryable, memberId: string): Promise<void> {
  await db.query('DELETE FROM members WHERE id = $1', [memberId]);
}

/** Removes every membership of a principal. */
export async function deleteMembershipsOf(db: Queryable, principalId: string): Promise<void> {
  await db.query('DELETE FROM members WHERE principal_id = $1', [principalId]);
}

/** How many owners the workspace has (call under the workspace's row lock). */
export async function ownerCount(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM members WHERE workspace_id = $1 AND role = 'owner'`,
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
}

/** How many members the workspace has, a service account's own membership included. */
export async function memberCount(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM members WHERE workspace_id = $1',
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
}

/** The name of a workspace `principalId` is the only owner of, if any. */
export async function soleOwnerOf(db: Queryable, principalId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT w.name FROM members m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.principal_id = $1 AND m.role = 'owner'
        AND NOT EXISTS (SELECT 1 FROM members o WHERE o.workspace_id = m.workspace_id AND o.role = 'owner' AND o.principal_id <> $1)`,
    [principalId],
  );
  return rows[0]?.name;
}

/**
 * Every workspace where `principalId` holds a role, with the caller's role there (`null`: the caller
 * is no member): what `checkReach` (access.ts) judges.
 *
 * @example
 * const reach = await reachOf(db, account.id, ctx.principal.id);
 */
export async function reachOf(db: Queryable, principalId: string, callerId: string): Promise<ReachRow[]> {
  const { rows } = await db.query<ReachRow>(
    `SELECT w.name, m.role, c.role AS caller_role
       FROM members m JOIN workspaces w ON w.id = m.workspace_id
       LEFT JOIN members c ON c.workspace_id = m.workspace_id AND c.principal_id = $2
      WHERE m.principal_id = $1`,
    [principalId, callerId],
  );
  return rows;
}
