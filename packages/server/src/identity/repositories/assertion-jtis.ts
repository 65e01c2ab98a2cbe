import type { Database } from '../../platform/db/database.js';

/**
 * Records an assertion's `jti` for its principal until `expiresAt` and marks the key it was signed
 * with as used, in one transaction; false (and nothing written) when the jti was recorded already.
 * `INSERT … ON CONFLICT DO NOTHING`, so a replay fails even when it races the first use on another
 * replica.
 *
 * @example
 * if (!(await recordJti(db, { principalId, jti, expiresAt, keyId }))) throw replayed;
 */
export function recordJti(
  db: Database,
  use: { principalId: string; jti: string; expiresAt: Date; keyId: string },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const inserted = await tx.query(
      `INSERT INTO assertion_jtis (principal_id, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [use.principalId, use.jti, use.expiresAt],
    );
    if (inserted.rowCount !== 1) return false;
    await tx.query('UPDATE keys SET last_used_at = now() WHERE id = $1', [use.keyId]);
    return true;
  });
}

/**
 * Deletes jti records whose assertions have expired; run now and then (the worker's housekeeping).
 *
 * @example
 * await purgeExpiredJtis(db);
 */
export async function purgeExpiredJtis(db: Database): Promise<number> {
  return (await db.query('DELETE FROM assertion_jtis WHERE expires_at < now()')).rowCount;
}
