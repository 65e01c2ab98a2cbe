import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import type { Role } from '../roles.js';
import type { WorkspaceRow } from './workspaces.js';

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

/** How many workspaces `GET /me` lists at most (the spec's cap). */
export const ME_WORKSPACES = 1000;

/** A principal as `authenticate` loads it, with its key's state and its memberships. */
export interface PrincipalAccessRow {
  id: string;
  kind: Schema<'PrincipalKind'>;
  name: string;
  display_name: string;
  email: string | null;
  disabled: boolean;
  /** Whether the token's key is still active and unexpired; `null` when the token names no key. */
  key_ok: boolean | null;
  /** Its workspaces and its role in each, newest first: at most {@link ME_WORKSPACES} + 1. */
  memberships: (Omit<WorkspaceRow, 'created_at' | 'updated_at'> & {
    created_at: number;
    updated_at: number;
    role: Role;
  })[];
}

/**
 * The principal's workspaces, newest first, as one JSON column: one more than `GET /me` lists, to
 * know whether the list is complete. Times as epoch milliseconds (truncated, as the drivers do).
 */
const MEMBERSHIPS = `(SELECT coalesce(json_agg(json_build_object('id', w.id, 'name', w.name,
      'display_name', w.display_name, 'lifetime_defaults', w.lifetime_defaults, 'created_by', w.created_by,
      'created_at', floor(extract(epoch FROM w.created_at) * 1000)::int8,
      'updated_at', floor(extract(epoch FROM w.updated_at) * 1000)::int8, 'role', m.role)
      ORDER BY w.id DESC), '[]'::json)
   FROM (SELECT workspace_id, role FROM members WHERE principal_id = p.id ORDER BY workspace_id DESC LIMIT ${ME_WORKSPACES + 1}) m
   JOIN workspaces w ON w.id = m.workspace_id) AS memberships`;

/**
 * The principal `id`, its key `keyId`'s state and its memberships, in ONE statement; `undefined` when
 * there is no such principal.
 *
 * @example
 * const row = await principalWithAccess(db, claims.sub, claims.key_id);
 */
export async function principalWithAccess(
  db: Queryable,
  id: string,
  keyId: string | undefined,
): Promise<PrincipalAccessRow | undefined> {
  const { rows } = await db.query<PrincipalAccessRow>(
    `SELECT p.id, p.kind, p.name, p.display_name, p.email, p.disabled_at IS NOT NULL AS disabled,
            CASE WHEN $2::text IS NULL THEN NULL
                 ELSE EXISTS (SELECT 1 FROM keys k WHERE k.id = $2 AND k.principal_id = p.id AND k.state = 'active'
                              AND (k.expires_at IS NULL OR k.expires_at > now())) END AS key_ok, ${MEMBERSHIPS}
       FROM principals p WHERE p.id = $1`,
    [id, keyId ?? null],
  );
  return rows[0];
}

/**
 * Whether the principal exists and is enabled.
 *
 * @example
 * if (!(await principalEnabled(tx, row.principal_id))) refuse();
 */
export async function principalEnabled(db: Queryable, principalId: string): Promise<boolean> {
  const { rows } = await db.query<{ enabled: boolean }>(
    'SELECT disabled_at IS NULL AS enabled FROM principals WHERE id = $1',
    [principalId],
  );
  return rows[0]?.enabled === true;
}

/**
 * Sets a principal's display name.
 *
 * @example
 * await setDisplayName(tx, principalId, 'Ada Lovelace');
 */
export async function setDisplayName(db: Queryable, id: string, displayName: string): Promise<void> {
  await db.query('UPDATE principals SET display_name = $1, updated_at = now() WHERE id = $2', [
    displayName,
    id,
  ]);
}

/**
 * Whether a user principal already has `name` (user names are unique among users).
 *
 * @example
 * if (await userNameTaken(tx, 'ada')) refuse();
 */
export async function userNameTaken(db: Queryable, name: string): Promise<boolean> {
  const taken = await db.query(`SELECT 1 FROM principals WHERE kind = 'user' AND name = $1`, [name]);
  return taken.rowCount > 0;
}

/**
 * Inserts a user principal (its local account comes next).
 *
 * @example
 * await insertUserPrincipal(tx, { id: newId(), name: 'ada', displayName: 'Ada', email: 'ada@example.com' });
 */
export async function insertUserPrincipal(
  db: Queryable,
  user: { id: string; name: string; displayName: string; email: string },
): Promise<void> {
  await db.query(
    `INSERT INTO principals (id, kind, name, display_name, email) VALUES ($1, 'user', $2, $3, $4)`,
    [user.id, user.name, user.displayName, user.email],
  );
}

/**
 * Whether the database holds any principal: the first start (bootstrap) runs only on one that holds none.
 *
 * @example
 * if (!(await hasPrincipals(db))) await bootstrap(db, options);
 */
export async function hasPrincipals(db: Queryable): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM principals LIMIT 1');
  return rowCount > 0;
}
