import type { Queryable } from '../../platform/db/database.js';

/**
 * Stores a single-use authorization code by its hash, bound to the redirect URI and the S256 PKCE
 * challenge of the sign-in; it expires `ttlSeconds` after the database's `now()` (one clock for all
 * replicas).
 *
 * @example
 * await insertAuthorizationCode(db, { codeHash, principalId, redirectUri, codeChallenge, ttlSeconds: 60 });
 */
export async function insertAuthorizationCode(
  db: Queryable,
  code: {
    codeHash: string;
    principalId: string;
    redirectUri: string;
    codeChallenge: string;
    ttlSeconds: number;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO authorization_codes (code_hash, principal_id, redirect_uri, code_challenge, code_challenge_method, expires_at)
     VALUES ($1, $2, $3, $4, 'S256', now() + make_interval(secs => $5))`,
    [code.codeHash, code.principalId, code.redirectUri, code.codeChallenge, code.ttlSeconds],
  );
}

/** An authorization code as its exchange reads it. */
export interface AuthorizationCodeRow {
  principal_id: string;
  redirect_uri: string;
  code_challenge: string;
  /** Presented before. */
  used: boolean;
  /** Not expired. */
  live: boolean;
}

/**
 * The code with this hash, its row locked until the transaction ends (two presentations of one code
 * are ordered); `undefined` when there is none.
 *
 * @example
 * const row = await lockAuthorizationCode(tx, hashSecret(code));
 */
export async function lockAuthorizationCode(
  tx: Queryable,
  codeHash: string,
): Promise<AuthorizationCodeRow | undefined> {
  const { rows } = await tx.query<AuthorizationCodeRow>(
    `SELECT principal_id, redirect_uri, code_challenge, used_at IS NOT NULL AS used, expires_at > now() AS live
       FROM authorization_codes WHERE code_hash = $1 FOR UPDATE`,
    [codeHash],
  );
  return rows[0];
}

/**
 * Spends a code: it is used from now on, whatever its exchange decides next.
 *
 * @example
 * await markAuthorizationCodeUsed(tx, codeHash);
 */
export async function markAuthorizationCodeUsed(tx: Queryable, codeHash: string): Promise<void> {
  await tx.query('UPDATE authorization_codes SET used_at = now() WHERE code_hash = $1', [codeHash]);
}
