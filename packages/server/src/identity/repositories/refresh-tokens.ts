import type { Queryable } from '../../platform/db/database.js';

/** A refresh token as its exchange reads it. */
export interface RefreshTokenRow {
  id: string;
  family_id: string;
  principal_id: string;
  /** Exchanged before: a newer token of its family replaced it. */
  rotated: boolean;
  revoked: boolean;
  /** Not expired. */
  live: boolean;
}

/**
 * The refresh token with this hash, its row locked until the transaction ends (two presentations of
 * one token are ordered); `undefined` when there is none.
 *
 * @example
 * const row = await lockRefreshToken(tx, hashSecret(refreshToken));
 */
export async function lockRefreshToken(
  tx: Queryable,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  const { rows } = await tx.query<RefreshTokenRow>(
    `SELECT id, family_id, principal_id, rotated_at IS NOT NULL AS rotated, revoked_at IS NOT NULL AS revoked, expires_at > now() AS live
       FROM refresh_tokens WHERE token_hash = $1 FOR UPDATE`,
    [tokenHash],
  );
  return rows[0];
}

/**
 * Marks a refresh token rotated: presenting it again revokes its family.
 *
 * @example
 * await markRefreshTokenRotated(tx, row.id);
 */
export async function markRefreshTokenRotated(tx: Queryable, id: string): Promise<void> {
  await tx.query('UPDATE refresh_tokens SET rotated_at = now() WHERE id = $1', [id]);
}

/**
 * Stores a refresh token by its hash, in its family (after `parentId`, the token it replaces), for
 * `ttlSeconds` from the database's `now()`.
 *
 * @example
 * await insertRefreshToken(tx, { id: newId(), familyId, principalId, tokenHash, parentId: null, ttlSeconds });
 */
export async function insertRefreshToken(
  tx: Queryable,
  token: {
    id: string;
    familyId: string;
    principalId: string;
    tokenHash: string;
    parentId: string | null;
    ttlSeconds: number;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO refresh_tokens (id, family_id, principal_id, token_hash, parent_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [token.id, token.familyId, token.principalId, token.tokenHash, token.parentId, token.ttlSeconds],
  );
}

/**
 * Revokes every token of a family that is not revoked yet (a replayed code or refresh token).
 *
 * @example
 * await revokeFamily(tx, row.family_id);
 */
export async function revokeFamily(tx: Queryable, familyId: string): Promise<void> {
  await tx.query('UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [
    familyId,
  ]);
}

/**
 * Revokes every refresh token of a principal that is not revoked yet: each of its sessions signs out.
 *
 * @example
 * await revokeRefreshTokensOf(tx, principalId);
 */
export async function revokeRefreshTokensOf(tx: Queryable, principalId: string): Promise<void> {
  await tx.query(
    'UPDATE refresh_tokens SET revoked_at = now() WHERE principal_id = $1 AND revoked_at IS NULL',
    [principalId],
  );
}
