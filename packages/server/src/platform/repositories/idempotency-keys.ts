import type { Database, Queryable } from '../db/database.js';

/** An `idempotency_keys` row as a replay reads it: the request's fingerprint and, once done, its response. */
export interface IdempotencyKeyRow {
  fingerprint: string;
  state: 'in_flight' | 'done';
  owner: string;
  status: number | null;
  headers: Record<string, string> | null;
  /** The response's JSON body as text; `null` for none. */
  body: string | null;
}

/**
 * Inserts an in-flight record for the principal's key, owned by `owner` and locked for `lockSeconds`,
 * or takes over a record older than `ttlHours` or whose lock ran out (its request died); false when
 * another request holds the key. Its own statement, so every replica sees the record at once.
 *
 * Committed without waiting for the WAL to reach the disk (`synchronous_commit` off for this statement
 * alone): the record only keeps concurrent requests with the key out while its request runs, and is
 * made durable by that request's own commit (which flushes the WAL up to it, the response with it),
 * so a database crash can lose only a claim whose request died with the crash. A create then waits
 * for one flush of the disk, not two.
 *
 * @example
 * const won = await claimIdempotencyKey(db, { ...scope, owner, lockSeconds: 60, ttlHours: 24 });
 */
export async function claimIdempotencyKey(
  // The pool, never a transaction: the setting would hold for the whole transaction.
  db: Database,
  claim: {
    principalId: string;
    key: string;
    fingerprint: string;
    owner: string;
    lockSeconds: number;
    ttlHours: number;
  },
): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO idempotency_keys (principal_id, key, fingerprint, state, owner, locked_until)
     SELECT $1, $2, $3, 'in_flight', $4, now() + make_interval(secs => $5)
       FROM (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush
     ON CONFLICT (principal_id, key) DO UPDATE
       SET fingerprint = EXCLUDED.fingerprint, state = 'in_flight', owner = EXCLUDED.owner,
           locked_until = EXCLUDED.locked_until, status = NULL, headers = NULL, body = NULL,
           created_at = now(), completed_at = NULL
       WHERE idempotency_keys.created_at < now() - make_interval(hours => $6)
          OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.locked_until < now())
     RETURNING owner`,
    [claim.principalId, claim.key, claim.fingerprint, claim.owner, claim.lockSeconds, claim.ttlHours],
  );
  return inserted.rowCount === 1;
}

/**
 * The record of the principal's key, or `undefined` when there is none.
 *
 * @example
 * const row = await idempotencyKeyRow(db, scope.principalId, scope.key);
 */
export async function idempotencyKeyRow(
  db: Queryable,
  principalId: string,
  key: string,
): Promise<IdempotencyKeyRow | undefined> {
  const { rows } = await db.query<IdempotencyKeyRow>(
    'SELECT fingerprint, state, owner, status, headers, body FROM idempotency_keys WHERE principal_id = $1 AND key = $2',
    [principalId, key],
  );
  return rows[0];
}

/**
 * Marks the record done with its response, if `owner` still holds it in flight; false otherwise
 * (another request took the key over).
 *
 * @example
 * const completed = await completeIdempotencyKey(tx, { ...scope, owner, status: 201, headers: null, body: '{}' });
 */
export async function completeIdempotencyKey(
  tx: Queryable,
  record: {
    principalId: string;
    key: string;
    owner: string;
    status: number;
    headers: Record<string, string> | null;
    body: string | null;
    /** The request's whole fingerprint, when it was known only once the request was read (a body of bytes). */
    fingerprint?: string;
  },
): Promise<boolean> {
  const updated = await tx.query(
    `UPDATE idempotency_keys SET state = 'done', status = $4, headers = $5, body = $6, completed_at = now(),
            fingerprint = COALESCE($7, fingerprint)
      WHERE principal_id = $1 AND key = $2 AND owner = $3 AND state = 'in_flight'`,
    [
      record.principalId,
      record.key,
      record.owner,
      record.status,
      record.headers,
      record.body,
      record.fingerprint ?? null,
    ],
  );
  return updated.rowCount === 1;
}

/**
 * Deletes the record if `owner` still holds it in flight, so the key may be used again.
 *
 * @example
 * await releaseIdempotencyKey(db, scope.principalId, scope.key, owner);
 */
export async function releaseIdempotencyKey(
  db: Queryable,
  principalId: string,
  key: string,
  owner: string,
): Promise<void> {
  await db.query(
    `DELETE FROM idempotency_keys WHERE principal_id = $1 AND key = $2 AND owner = $3 AND state = 'in_flight'`,
    [principalId, key, owner],
  );
}

/**
 * Deletes the records created more than `hours` ago; how many.
 *
 * @example
 * await deleteIdempotencyKeysOlderThan(db, 24);
 */
export async function deleteIdempotencyKeysOlderThan(db: Queryable, hours: number): Promise<number> {
  return (
    await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [
      hours,
    ])
  ).rowCount;
}

/**
 * Deletes the record of the principal's key, whatever its state.
 *
 * @example
 * await deleteIdempotencyKey(db, scope.principalId, scope.key);
 */
export async function deleteIdempotencyKey(db: Queryable, principalId: string, key: string): Promise<void> {
  await db.query('DELETE FROM idempotency_keys WHERE principal_id = $1 AND key = $2', [principalId, key]);
}

/**
 * Pushes the lock of an in-flight record `lockSeconds` from now, if `owner` still holds it: a request
 * that runs long on purpose (an upload of a gigabyte) keeps its key; false when it lost it.
 *
 * @example
 * await extendIdempotencyLock(db, { principalId, key, owner, lockSeconds: 60 });
 */
export async function extendIdempotencyLock(
  db: Queryable,
  lock: { principalId: string; key: string; owner: string; lockSeconds: number },
): Promise<boolean> {
  const updated = await db.query(
    `UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => $4)
      WHERE principal_id = $1 AND key = $2 AND owner = $3 AND state = 'in_flight'`,
    [lock.principalId, lock.key, lock.owner, lock.lockSeconds],
  );
  return updated.rowCount === 1;
}
