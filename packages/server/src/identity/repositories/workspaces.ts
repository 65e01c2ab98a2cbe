import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import { isId } from '../../platform/ids.js';
import type { Role } from '../roles.js';

/** A `workspaces` row. */
export interface WorkspaceRow {
  id: string;
  name: string;
  display_name: string;
  /** The lifetime new computers get (the API's shape, no nulls); `null` when none is set. */
  lifetime_defaults?: Schema<'LifetimeDefaults'> | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'w.id, w.name, w.display_name, w.lifetime_defaults, w.created_by, w.created_at, w.updated_at';

/**
 * The workspace `ref` names (an id, or else a name) with `principalId`'s CURRENT role in it, in one
 * query; `undefined` when there is no such workspace or the principal is no member of it. `lock`
 * takes a row lock on the workspace.
 *
 * @example
 * const row = await workspaceWithRole(tx, principal.id, 'acme', { lock: true }); // { id, name, …, role }
 */
export async function workspaceWithRole(
  db: Queryable,
  principalId: string,
  ref: string,
  options: { lock?: boolean } = {},
): Promise<(WorkspaceRow & { role: Role }) | undefined> {
  const { rows } = await db.query<WorkspaceRow & { role: Role }>(
    `SELECT ${COLUMNS}, m.role
       FROM workspaces w JOIN members m ON m.workspace_id = w.id AND m.principal_id = $2
      WHERE ${isId(ref) ? 'w.id' : 'w.name'} = $1${options.lock ? ' FOR UPDATE OF w' : ''}`,
    [ref, principalId],
  );
  return rows[0];
}

/** One page of the workspaces `principalId` is a member of (any role), newest first. */
export async function listWorkspaceRows(
  db: Queryable,
  principalId: string,
  page: { after: string | null; limit: number },
): Promise<WorkspaceRow[]> {
  const { rows } = await db.query<WorkspaceRow>(
    `SELECT ${COLUMNS} FROM workspaces w JOIN members m ON m.workspace_id = w.id AND m.principal_id = $1
      WHERE ($2::text IS NULL OR w.id < $2) ORDER BY w.id DESC LIMIT $3`,
    [principalId, page.after, page.limit],
  );
  return rows;
}

/** How many workspaces `principalId` has created (the workspaces quota, design §11). */
export async function countWorkspacesCreatedBy(db: Queryable, principalId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM workspaces WHERE created_by = $1',
    [principalId],
  );
  return rows[0]?.n ?? 0;
}

/** Inserts a workspace; `undefined` when its name is taken. */
export async function insertWorkspace(
  db: Queryable,
  workspace: { id: string; name: string; displayName: string; createdBy: string },
): Promise<WorkspaceRow | undefined> {
  const { rows } = await db.query<WorkspaceRow>(
    `INSERT INTO workspaces (id, name, display_name, created_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name) DO NOTHING RETURNING *`,
    [workspace.id, workspace.name, workspace.displayName, workspace.createdBy],
  );
  return rows[0];
}

/**
 * Sets a workspace's name and display name (each left as it is when `null`) and, when `lifetimeDefaults`
 * is given, its lifetime defaults (`null` clears them); answers the updated row.
 */
export async function updateWorkspaceRow(
  db: Queryable,
  id: string,
  change: {
    name: string | null;
    displayName: string | null;
    lifetimeDefaults?: Schema<'LifetimeDefaults'> | null;
  },
): Promise<WorkspaceRow> {
  const { rows } = await db.query<WorkspaceRow>(
    `UPDATE workspaces SET name = coalesce($2, name), display_name = coalesce($3, display_name),
            lifetime_defaults = CASE WHEN $4 THEN $5::jsonb ELSE lifetime_defaults END, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS.replaceAll('w.', '')}`,
    [
      id,
      change.name,
      change.displayName,
      change.lifetimeDefaults !== undefined,
      change.lifetimeDefaults ?? null,
    ],
  );
  return rows[0] as WorkspaceRow;
}

/**
 * Deletes a workspace. Its service accounts stop working at once: their principals are disabled,
 * their keys revoked and their memberships elsewhere removed; the rest goes with the workspace.
 */
export async function deleteWorkspaceRow(db: Queryable, workspaceId: string): Promise<void> {
  await db.query(
    `UPDATE principals SET disabled_at = now(), updated_at = now()
      WHERE id IN (SELECT id FROM service_accounts WHERE workspace_id = $1)`,
    [workspaceId],
  );
  await db.query(
    `UPDATE keys SET state = 'revoked', revoked_at = coalesce(revoked_at, now()), updated_at = now()
      WHERE principal_id IN (SELECT id FROM service_accounts WHERE workspace_id = $1)`,
    [workspaceId],
  );
  await db.query(
    'DELETE FROM members WHERE principal_id IN (SELECT id FROM service_accounts WHERE workspace_id = $1)',
    [workspaceId],
  );
  await db.query('DELETE FROM workspaces WHERE id = $1', [workspaceId]);
}
