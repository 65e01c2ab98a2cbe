import { createHash, randomUUID } from 'node:crypto';
import type { Database, Queryable } from './db/database.js';
import { ApiError, toApiError } from './errors.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteIdempotencyKey,
  deleteIdempotencyKeysOlderThan,
  type IdempotencyKeyRow,
  idempotencyKeyRow,
  releaseIdempotencyKey,
} from './repositories/idempotency-keys.js';

/** How long a record answers replays. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** How long an in-flight record blocks its key before another request may take it over. */
export const IN_FLIGHT_LOCK_SECONDS = 60;

/**
 * The idempotency failures of design §9 once a key is in hand: 409 `idempotency_key_in_use` (with
 * `Retry-After`), 422 `idempotency_key_reused`. The key itself is checked once, by request validation
 * against the spec's `Idempotency-Key` parameter (400 `idempotency_key_required` / `invalid_argument`).
 *
 * @example
 * if (error instanceof IdempotencyError && error.code === 'idempotency_key_in_use') retryLater();
 */
export class IdempotencyError extends ApiError {
  override name = 'IdempotencyError';
}

/** JSON with object keys sorted at every level, so equal bodies fingerprint equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/**
 * SHA-256 (hex) of method, path, query (parameters sorted) and canonical JSON body: what "the same
 * request" means for a key (design §10).
 *
 * @example
 * requestFingerprint({ method: 'POST', path: '/v1/workspaces/acme/computers', query: '', body: { name: 'web-1' } });
 */
export function requestFingerprint(request: {
  method: string;
  path: string;
  query: string | URLSearchParams;
  body: unknown;
}): string {
  const query = [...new URLSearchParams(request.query)].sort(([a, x], [b, y]) =>
    a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1,
  );
  return createHash('sha256')
    .update(canonicalJson([request.method.toUpperCase(), request.path, query, request.body ?? null]))
    .digest('hex');
}

/** A response as stored with its key and replayed later. */
export interface StoredResponse {
  status: number;
  /** Headers worth replaying (e.g. `location`, `retry-after`); lower-case names. */
  headers?: Record<string, string>;
  /** The JSON body; `undefined` for none (204). */
  body?: unknown;
}

/** What `runIdempotent` answers: the response, and whether it is a replay (send `Idempotent-Replayed: true`). */
export interface IdempotentOutcome extends StoredResponse {
  replayed: boolean;
}

/** Which principal's key, and for which request. */
export interface IdempotencyScope {
  principalId: string;
  key: string;
  fingerprint: string;
  /** The request's id, kept in a stored error envelope (a replay answers with the original). */
  requestId?: string;
}

/**
 * Error statuses that are stored and replayed like successes: the request was understood and
 * answered, and asking again must answer the same (404, and 409 conflicts such as `already_exists`
 * or `invalid_state`). Validation (400/413/415), 401/403, 429 and 5xx are not stored (design §10):
 * the client fixes the request, waits, or retries with the same key.
 */
export function stored(status: number): boolean {
  return status < 400 || status === 404 || status === 409;
}

/**
 * Runs a mutation under an Idempotency-Key (design §10), or just in a transaction when `scope` is
 * undefined. `effect` gets the transaction: its writes and the record of its response commit
 * together, so a crash can never leave an effect without its record, nor a record without its effect.
 *
 * 1. `INSERT … ON CONFLICT DO NOTHING` an in-flight record (own statement, visible to every replica).
 * 2. Lost the insert: same key, other fingerprint → 422; done → the stored response, `replayed`;
 *    still in flight → 409 `idempotency_key_in_use` with `Retry-After`. Expired records (24 h) and
 *    in-flight records whose request died (lock older than 60 s) are taken over.
 * 3. Won: run `effect` in a transaction that also marks the record done, fenced by an owner token so
 *    a request that outlived its lock cannot commit a second effect. What `effect` hands to
 *    `tx.commitWith` runs after the record, with the COMMIT; its refusal is thrown as `effect`'s own.
 *    With `transaction: false` (an effect that only reads and waits, e.g. a command run in a computer)
 *    the effect runs on `db` and the record is marked done after it.
 * 4. `effect` threw: its transaction rolled back. A 404/409 `ApiError` is stored as the answer; any
 *    other error deletes the in-flight record, so the same key may be retried.
 *
 * @example
 * const outcome = await runIdempotent(db, scope, async (tx) => {
 *   const { computer, operation } = await createComputerRecord(tx, input, principal.id);
 *   return { status: 202, headers: { location }, body: { computer, operations: [operation] } };
 * });
 * if (outcome.replayed) headers['idempotent-replayed'] = 'true';
 */
export async function runIdempotent(
  db: Database,
  scope: IdempotencyScope | undefined,
  effect: (tx: Queryable) => Promise<StoredResponse>,
  options: { transaction?: boolean } = {},
): Promise<IdempotentOutcome> {
  // Without a transaction nothing the effect writes commits with the record (it reads, waits, or
  // writes what stands alone): the record is still claimed first and completed after, so a retry
  // replays instead of running it twice.
  const within = <T>(fn: (tx: Queryable) => Promise<T>) =>
    options.transaction === false ? fn(db) : db.transaction(fn);
  if (!scope) return { ...(await within(effect)), replayed: false };
  const owner = randomUUID();
  const existing = await claimKey(db, scope, owner);
  if (existing) return existing;
  try {
    return await within(async (tx) => {
      const response = await effect(tx);
      await complete(tx, scope, owner, response);
      return { ...response, replayed: false };
    });
  } catch (thrown) {
    const error = toApiError(thrown);
    if (error instanceof IdempotencyError) throw thrown;
    if (stored(error.status) && error.status >= 400) {
      const envelope = {
        status: error.status,
        headers: error.headers,
        body: error.toEnvelope(scope.requestId ?? ''),
      };
      await complete(db, scope, owner, envelope).catch(() => releaseKey(db, scope, owner));
    } else {
      await releaseKey(db, scope, owner);
    }
    throw thrown;
  }
}

/**
 * Inserts (or takes over) the in-flight record, locked for `lockSeconds`; answers instead when another
 * request has the key: 409 `idempotency_key_in_use` while it is in flight (422 when for another
 * request), else its stored answer, `replayed`, once `sameRequest` says the record is this request's
 * (it throws {@link reusedKey} when not; by default the fingerprints must be equal). The one claim of
 * both JSON bodies and bodies of bytes (whose `sameRequest` reads and hashes the bytes).
 *
 * @example
 * const existing = await claimKey(db, scope, owner);
 * if (existing) return existing; // a replay
 */
export async function claimKey(
  db: Database,
  scope: IdempotencyScope,
  owner: string,
  {
    lockSeconds = IN_FLIGHT_LOCK_SECONDS,
    sameRequest = async (row: IdempotencyKeyRow) => {
      if (row.fingerprint !== scope.fingerprint) throw reusedKey();
    },
  }: { lockSeconds?: number; sameRequest?: (row: IdempotencyKeyRow) => Promise<void> } = {},
): Promise<IdempotentOutcome | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const won = await claimIdempotencyKey(db, {
      principalId: scope.principalId,
      key: scope.key,
      fingerprint: scope.fingerprint,
      owner,
      lockSeconds,
      ttlHours: IDEMPOTENCY_TTL_HOURS,
    });
    if (won) return undefined;
    const row = await idempotencyKeyRow(db, scope.principalId, scope.key);
    if (!row) continue; // released between our insert and select: try again
    if (row.state === 'in_flight') {
      // An in-flight record holds the fingerprint it was claimed with.
      if (row.fingerprint !== scope.fingerprint) throw reusedKey();
      throw new IdempotencyError(
        'idempotency_key_in_use',
        'a request with this Idempotency-Key is still being processed; retry shortly',
        { headers: { 'retry-after': '1' } },
      );
    }
    await sameRequest(row);
    return {
      status: row.status ?? 200,
      ...(row.headers ? { headers: row.headers } : {}),
      ...(row.body === null ? {} : { body: JSON.parse(row.body) }),
      replayed: true,
    };
  }
  throw new IdempotencyError('idempotency_key_in_use', 'this Idempotency-Key is contended; retry shortly', {
    headers: { 'retry-after': '1' },
  });
}

/** 422 `idempotency_key_reused`: the key was used with another request. */
export function reusedKey(): IdempotencyError {
  // No details: the spec's ErrorDetails is closed, and the client knows the key it sent.
  return new IdempotencyError(
    'idempotency_key_reused',
    'this Idempotency-Key was used with a different request',
  );
}

async function complete(
  tx: Queryable,
  scope: IdempotencyScope,
  owner: string,
  response: StoredResponse,
): Promise<void> {
  const completed = await completeIdempotencyKey(tx, {
    principalId: scope.principalId,
    key: scope.key,
    owner,
    status: response.status,
    headers: response.headers ?? null,
    body: response.body === undefined ? null : JSON.stringify(response.body),
  });
  if (!completed) {
    // Another request took the key over after our lock ran out: our effect must not commit.
    throw keyLost();
  }
}

/**
 * The answer to a request whose Idempotency-Key was taken over after its lock ran out: its effect must
 * not commit, and a retry is welcome (409 `idempotency_key_in_use`, `Retry-After: 1`).
 *
 * @example
 * if (!completed) throw keyLost();
 */
export function keyLost(): IdempotencyError {
  return new IdempotencyError(
    'idempotency_key_in_use',
    'this request took too long and lost its Idempotency-Key; retry',
    { headers: { 'retry-after': '1' } },
  );
}

/**
 * Frees the key this request holds (it failed before an answer worth keeping), so a retry runs again.
 *
 * @example
 * await releaseKey(db, scope, owner);
 */
export async function releaseKey(db: Database, scope: IdempotencyScope, owner: string): Promise<void> {
  try {
    await releaseIdempotencyKey(db, scope.principalId, scope.key, owner);
  } catch {
    // The database is what failed the request (restarting, unreachable): the key is freed once it is
    // back, not left in flight for the lock's whole minute while the client retries.
    releaseLater(db, scope, owner, 0);
  }
}

/** When a release the database refused is tried again (then the lock's expiry frees the key). */
const RELEASE_RETRY_MS = [250, 500, 1000, 2000, 4000, 8000] as const;

function releaseLater(db: Database, scope: IdempotencyScope, owner: string, attempt: number): void {
  const delay = RELEASE_RETRY_MS[attempt];
  if (delay === undefined) return;
  setTimeout(() => {
    // Fenced by `owner`: a request that took the key over meanwhile keeps it.
    releaseIdempotencyKey(db, scope.principalId, scope.key, owner).catch(() =>
      releaseLater(db, scope, owner, attempt + 1),
    );
  }, delay).unref();
}

/**
 * Deletes records older than 24 hours; run now and then (housekeeping).
 *
 * @example
 * await purgeExpiredIdempotencyKeys(db);
 */
export async function purgeExpiredIdempotencyKeys(db: Queryable): Promise<number> {
  return deleteIdempotencyKeysOlderThan(db, IDEMPOTENCY_TTL_HOURS);
}

/**
 * Forgets the record of one key, so the key answers nothing on its next use: the token route stores
 * no 401 (design §10), but a refused credential still commits its transaction (see `auth/grants.ts`).
 *
 * @example
 * await forgetIdempotencyKey(db, scope);
 */
export async function forgetIdempotencyKey(
  db: Queryable,
  scope: Pick<IdempotencyScope, 'principalId' | 'key'>,
): Promise<void> {
  await deleteIdempotencyKey(db, scope.principalId, scope.key);
}
