import type { Schema } from '@svc/contract';
import type { JWK } from 'jose';
import type { Queryable } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import { ownerPage } from '../../platform/repositories/keyset.js';
import type { KeyAlgorithm } from '../auth/keypair.js';

/** A `keys` row. */
export interface KeyRow {
  id: string;
  principal_id: string;
  algorithm: KeyAlgorithm;
  public_jwk: JWK;
  state: Schema<'KeyState'>;
  expires_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, principal_id, algorithm, public_jwk, state, expires_at, last_used_at, created_at, updated_at';

/** A key of the service account by id; 404 `not_found` otherwise. */
export async function keyOf(db: Queryable, accountId: string, keyId: string): Promise<KeyRow> {
  const { rows } = await db.query<KeyRow>(`SELECT ${COLUMNS} FROM keys WHERE principal_id = $1 AND id = $2`, [
    accountId,
    keyId,
  ]);
  if (!rows[0]) throw new ApiError('not_found', `key ${keyId} not found for this service account`);
  return rows[0];
}

/** One page of a service account's keys, newest first. */
export async function listKeyRows(
  db: Queryable,
  accountId: string,
  page: { after: string | null; limit: number },
): Promise<KeyRow[]> {
  const keyset = ownerPage('principal_id', '$1');
  const { rows } = await db.query<KeyRow>(
    `SELECT ${COLUMNS} FROM keys WHERE ${keyset.where} AND ($2::text IS NULL OR id < $2) ORDER BY ${keyset.order} LIMIT $3`,
    [accountId, page.after, page.limit],
  );
  return rows;
}

/** How many of the service account's keys are active and unexpired (the keys quota, design §11). */
export async function countActiveKeys(db: Queryable, accountId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM keys WHERE principal_id = $1 AND state = 'active'
        AND (expires_at IS NULL OR expires_at > now())`,
    [accountId],
  );
  return rows[0]?.n ?? 0;
}

/** Inserts a key's public half; answers its row. */
export async function insertKey(
  db: Queryable,
  key: { id: string; accountId: string; algorithm: KeyAlgorithm; publicJwk: JWK; expiresAt: Date | null },
): Promise<KeyRow> {
  const { rows } = await db.query<KeyRow>(
    `INSERT INTO keys (id, principal_id, algorithm, public_jwk, expires_at) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${COLUMNS}`,
    [key.id, key.accountId, key.algorithm, key.publicJwk, key.expiresAt],
  );
  return rows[0] as KeyRow;
}

/** Revokes one key; a revoked key keeps its first revocation time. */
export async function revokeKey(db: Queryable, id: string): Promise<void> {
  await db.query(
    `UPDATE keys SET state = 'revoked', revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE id = $1`,
    [id],
  );
}

/** Revokes every key of a principal. */
export async function revokeKeysOf(db: Queryable, principalId: string): Promise<void> {
  await db.query(
    `UPDATE keys SET state = 'revoked', revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE principal_id = $1`,
    [principalId],
  );
}

/** What verifying an assertion needs of the key its `kid` names. */
export interface AssertionKeyRow {
  principal_id: string;
  algorithm: KeyAlgorithm;
  public_jwk: JWK;
  state: Schema<'KeyState'>;
  expires_at: Date | null;
}

/**
 * The key an assertion's `kid` names, whatever its principal, or `undefined` when there is none.
 *
 * @example
 * const stored = await assertionKey(db, header.kid);
 */
export async function assertionKey(db: Queryable, keyId: string): Promise<AssertionKeyRow | undefined> {
  const { rows } = await db.query<AssertionKeyRow>(
    'SELECT principal_id, algorithm, public_jwk, state, expires_at FROM keys WHERE id = $1',
    [keyId],
  );
  return rows[0];
}
