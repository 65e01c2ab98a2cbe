import type { Schema } from '@svc/contract';
import type { Queryable } from '../db/database.js';

/** Locks a principal's row: serialises that principal's creates (quotas counted per principal). */
export async function lockPrincipal(db: Queryable, principalId: string): Promise<void> {
  await db.query('SELECT id FROM principals WHERE id = $1 FOR UPDATE', [principalId]);
}

/** The kind of an enabled principal, or `undefined` when there is none (or it is disabled). */
export async function enabledPrincipalKind(db: Queryable, principalId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ kind: string }>(
    'SELECT kind FROM principals WHERE id = $1 AND disabled_at IS NULL',
    [principalId],
  );
  return rows[0]?.kind;
}

/** Inserts the principal of a new service account. */
export async function insertServiceAccountPrincipal(
  db: Queryable,
  principal: { id: string; name: string; displayName: string },
): Promise<void> {
  await db.query(
    `INSERT INTO principals (id, kind, name, display_name) VALUES ($1, 'service_account', $2, $3)`,
    [principal.id, principal.name, principal.displayName],
  );
}

/** Sets a principal's name and display name (each left as it is when `null`). */
export async function renamePrincipal(
  db: Queryable,
  id: string,
  change: { name: string | null; displayName: string | null },
): Promise<void> {
  await db.query(
    `UPDATE principals SET name = coalesce($2, name), display_name = coalesce($3, display_name), updated_at = now()
      WHERE id = $1`,
    [id, change.name, change.displayName],
  );
}

/** Disables a principal: its tokens fail on the next request. */
export async function disablePrincipal(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE principals SET disabled_at = now(), updated_at = now() WHERE id = $1', [id]);
}

/** The workspaces of a principal with its role in each, newest first (`GET /me`). */
export async function membershipsOf(
  db: Queryable,
  principalId: string,
): Promise<Schema<'WorkspaceMembership'>[]> {
  const { rows } = await db.query<Schema<'WorkspaceMembership'>>(
    `SELECT w.id, w.name, CASE WHEN w.display_name = '' THEN w.name ELSE w.display_name END AS display_name, m.role
           FROM members m JOIN workspaces w ON w.id = m.workspace_id
          WHERE m.principal_id = $1 ORDER BY w.id DESC LIMIT 1000`,
    [principalId],
  );
  return rows;
}
