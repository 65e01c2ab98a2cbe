import type { Queryable } from '../../platform/db/database.js';

/** A local account as sign-in checks it: its password hash, and whether its principal is disabled. */
export interface LocalAccountRow {
  principal_id: string;
  password_hash: string;
  disabled: boolean;
}

/**
 * The principal of the local account with this username, its row locked until the transaction ends
 * (two resets of one account are ordered); `undefined` when there is none.
 *
 * @example
 * const principalId = await lockLocalAccount(tx, 'ada@example.com');
 */
export async function lockLocalAccount(tx: Queryable, username: string): Promise<string | undefined> {
  const { rows } = await tx.query<{ principal_id: string }>(
    'SELECT principal_id FROM local_accounts WHERE username = $1 FOR UPDATE',
    [username],
  );
  return rows[0]?.principal_id;
}

/**
 * Replaces the password hash of a principal's local account.
 *
 * @example
 * await setPasswordHash(tx, principalId, await hashPassword(password));
 */
export async function setPasswordHash(
  tx: Queryable,
  principalId: string,
  passwordHash: string,
): Promise<void> {
  await tx.query('UPDATE local_accounts SET password_hash = $1, updated_at = now() WHERE principal_id = $2', [
    passwordHash,
    principalId,
  ]);
}

/**
 * Adds the local account of a user principal (inserted first).
 *
 * @example
 * await insertLocalAccount(tx, { principalId, username, passwordHash });
 */
export async function insertLocalAccount(
  tx: Queryable,
  account: { principalId: string; username: string; passwordHash: string },
): Promise<void> {
  await tx.query('INSERT INTO local_accounts (principal_id, username, password_hash) VALUES ($1, $2, $3)', [
    account.principalId,
    account.username,
    account.passwordHash,
  ]);
}

/**
 * The local account with this username, with whether its principal is disabled; `undefined` when
 * there is none.
 *
 * @example
 * const account = await localAccountByUsername(db, usernameOf(email));
 */
export async function localAccountByUsername(
  db: Queryable,
  username: string,
): Promise<LocalAccountRow | undefined> {
  const { rows } = await db.query<LocalAccountRow>(
    `SELECT a.principal_id, a.password_hash, p.disabled_at IS NOT NULL AS disabled
       FROM local_accounts a JOIN principals p ON p.id = a.principal_id
      WHERE a.username = $1`,
    [username],
  );
  return rows[0];
}
