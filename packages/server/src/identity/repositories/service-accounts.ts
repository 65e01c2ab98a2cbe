import type { Queryable } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import { isId } from '../../platform/ids.js';
import { ownerPage } from '../../platform/repositories/keyset.js';
import type { Role } from '../roles.js';
import type { ReachRow } from './members.js';

/** A service account: its row, its principal's display name and its role in the owning workspace. */
export interface ServiceAccountRow {
  id: string;
  workspace_id: string;
  name: string;
  display_name: string;
  role: Role;
  created_at: Date;
  updated_at: Date;
}

/** The columns of a rendered service account, from `service_accounts s`, `principals p`, `members m`. */
const COLUMNS = 's.id, s.workspace_id, s.name, p.display_name, m.role, s.created_at, s.updated_at';
/** The joins behind {@link COLUMNS}: its role is its membership in the owning workspace. */
const FROM = `service_accounts s JOIN principals p ON p.id = s.id
  JOIN members m ON m.workspace_id = s.workspace_id AND m.principal_id = s.id`;

/**
 * A service account of the workspace, by id or name (design §1: an id-shaped value is an id);
 * 404 `not_found` otherwise. `lock` locks its row.
 *
 * @example
 * const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account);
 */
export async function serviceAccountIn(
  db: Queryable,
  workspaceId: string,
  ref: string,
  options: { lock?: boolean } = {},
): Promise<ServiceAccountRow> {
  const { rows } = await db.query<ServiceAccountRow>(
    `SELECT ${COLUMNS} FROM ${FROM}
      WHERE s.workspace_id = $1 AND ${isId(ref) ? 's.id' : 's.name'} = $2${options.lock ? ' FOR UPDATE OF s' : ''}`,
    [workspaceId, ref],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `service account ${ref} not found in this workspace`);
  return row;
}

/**
 * {@link serviceAccountIn}, and in the same statement every workspace where the account holds a role
 * with the caller's role there: what `judgeReach` (access.ts) needs before its keys may be listed or
 * changed. One round trip instead of two.
 *
 * @example
 * const { account, reach } = await serviceAccountWithReach(ctx.db, workspace.id, ref, ctx.principal.id);
 * judgeReach(reach, 'read');
 */
export async function serviceAccountWithReach(
  db: Queryable,
  workspaceId: string,
  ref: string,
  callerId: string,
  options: { lock?: boolean } = {},
): Promise<{ account: ServiceAccountRow; reach: ReachRow[] }> {
  const { rows } = await db.query<ServiceAccountRow & { reach: ReachRow[] }>(
    `SELECT ${COLUMNS},
            (SELECT coalesce(json_agg(json_build_object('name', rw.name, 'role', rm.role, 'caller_role', rc.role)), '[]')
               FROM members rm JOIN workspaces rw ON rw.id = rm.workspace_id
               LEFT JOIN members rc ON rc.workspace_id = rm.workspace_id AND rc.principal_id = $3
              WHERE rm.principal_id = s.id) AS reach
       FROM ${FROM}
      WHERE s.workspace_id = $1 AND ${isId(ref) ? 's.id' : 's.name'} = $2${options.lock ? ' FOR UPDATE OF s' : ''}`,
    [workspaceId, ref, callerId],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `service account ${ref} not found in this workspace`);
  const { reach, ...account } = row;
  return { account, reach };
}

/** One page of a workspace's service accounts, newest first. */
export async function listServiceAccountRows(
  db: Queryable,
  workspaceId: string,
  page: { after: string | null; limit: number },
): Promise<ServiceAccountRow[]> {
  const keyset = ownerPage('s.workspace_id', '$1', 's.id');
  const { rows } = await db.query<ServiceAccountRow>(
    `SELECT ${COLUMNS} FROM ${FROM}
      WHERE ${keyset.where} AND ($2::text IS NULL OR s.id < $2) ORDER BY ${keyset.order} LIMIT $3`,
    [workspaceId, page.after, page.limit],
  );
  return rows;
}

/** Inserts a service account (its principal first); `false` when the name is taken in the workspace. */
export async function insertServiceAccount(
  db: Queryable,
  account: { id: string; workspaceId: string; name: string },
): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO service_accounts (id, workspace_id, name) VALUES ($1, $2, $3)
     ON CONFLICT (workspace_id, name) DO NOTHING`,
    [account.id, account.workspaceId, account.name],
  );
  return inserted.rowCount === 1;
}

/** Renames a service account; `false` when another of the workspace has the name. */
export async function renameServiceAccount(
  db: Queryable,
  account: { id: string; workspaceId: string; name: string },
): Promise<boolean> {
  const renamed = await db.query(
    `UPDATE service_accounts SET name = $2, updated_at = now() WHERE id = $1
         AND NOT EXISTS (SELECT 1 FROM service_accounts WHERE workspace_id = $3 AND name = $2)`,
    [account.id, account.name, account.workspaceId],
  );
  return renamed.rowCount === 1;
}

/** Marks a service account changed. */
export async function touchServiceAccount(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE service_accounts SET updated_at = now() WHERE id = $1', [id]);
}

/** Deletes a service account's row (its name is free again). */
export async function deleteServiceAccountRow(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM service_accounts WHERE id = $1', [id]);
}

/** Whether `principalId` is a service account owned by the workspace. */
export async function isServiceAccountOf(
  db: Queryable,
  principalId: string,
  workspaceId: string,
): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM service_accounts WHERE id = $1 AND workspace_id = $2', [
    principalId,
    workspaceId,
  ]);
  return rowCount > 0;
}
