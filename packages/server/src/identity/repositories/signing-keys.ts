import type { JWK } from 'jose';
import type { Queryable } from '../../platform/db/database.js';

/** A `server_signing_keys` row: the server's access-token signing keys, private halves sealed. */
export interface SigningKeyRow {
  id: string;
  public_jwk: JWK;
  /** A private key as older versions stored it, in plaintext (sealed on first use since). */
  private_jwk: JWK | null;
  /** The private key sealed as a compact JWE. */
  private_jwe: string | null;
  state: 'active' | 'retired';
}

/**
 * The public key of the signing key `kid` (active or retired), or `undefined` when there is none.
 *
 * @example
 * const jwk = await signingPublicKey(db, kid);
 */
export async function signingPublicKey(db: Queryable, kid: string): Promise<JWK | undefined> {
  const { rows } = await db.query<Pick<SigningKeyRow, 'public_jwk'>>(
    'SELECT public_jwk FROM server_signing_keys WHERE id = $1',
    [kid],
  );
  return rows[0]?.public_jwk;
}

/**
 * The signing keys whose private half is still in plaintext (rows of versions before sealing).
 *
 * @example
 * for (const row of await plaintextSigningKeys(db)) await sealSigningKey(db, row.id, await seal(row));
 */
export async function plaintextSigningKeys(
  db: Queryable,
): Promise<Pick<SigningKeyRow, 'id' | 'private_jwk'>[]> {
  const { rows } = await db.query<Pick<SigningKeyRow, 'id' | 'private_jwk'>>(
    'SELECT id, private_jwk FROM server_signing_keys WHERE private_jwk IS NOT NULL',
  );
  return rows;
}

/**
 * Replaces a plaintext private key by its sealed form; a key another replica sealed first is left.
 *
 * @example
 * await sealSigningKey(db, row.id, jwe);
 */
export async function sealSigningKey(db: Queryable, id: string, privateJwe: string): Promise<void> {
  await db.query(
    `UPDATE server_signing_keys SET private_jwe = $2, private_jwk = NULL
      WHERE id = $1 AND private_jwk IS NOT NULL`,
    [id, privateJwe],
  );
}

/**
 * Stores a new active EdDSA signing key, unless one is active already (a unique index on the active
 * key: concurrent first starts agree on one).
 *
 * @example
 * await insertSigningKey(db, { id: kid, publicJwk, privateJwe });
 */
export async function insertSigningKey(
  db: Queryable,
  key: { id: string; publicJwk: JWK; privateJwe: string },
): Promise<void> {
  await db.query(
    `INSERT INTO server_signing_keys (id, algorithm, public_jwk, private_jwe) VALUES ($1, 'EdDSA', $2, $3)
     ON CONFLICT DO NOTHING`,
    [key.id, key.publicJwk, key.privateJwe],
  );
}

/**
 * The active signing key with its sealed private half, or `undefined` when there is none yet.
 *
 * @example
 * const row = await activeSigningKey(db);
 */
export async function activeSigningKey(
  db: Queryable,
): Promise<Pick<SigningKeyRow, 'id' | 'private_jwe'> | undefined> {
  const { rows } = await db.query<Pick<SigningKeyRow, 'id' | 'private_jwe'>>(
    `SELECT id, private_jwe FROM server_signing_keys WHERE state = 'active'`,
  );
  return rows[0];
}
