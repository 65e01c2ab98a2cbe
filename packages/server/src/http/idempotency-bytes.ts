import { randomUUID } from 'node:crypto';
import type { Database } from '../platform/db/database.js';
import { ApiError, toApiError } from '../platform/errors.js';
import {
  IDEMPOTENCY_TTL_HOURS,
  IdempotencyError,
  type IdempotencyScope,
  type IdempotentOutcome,
  IN_FLIGHT_LOCK_SECONDS,
  keyLost,
  releaseKey,
  type StoredResponse,
  stored,
} from '../platform/idempotency.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  extendIdempotencyLock,
  idempotencyKeyRow,
} from '../platform/repositories/idempotency-keys.js';
import { BodyTooLargeError, type IncomingBytes } from './byte-body.js';

/** How long the in-flight lock of an upload is, and how often it is pushed on while the upload runs. */
export interface BytesLockOptions {
  lockSeconds: number;
  heartbeatMs: number;
}

const DEFAULT_LOCK: BytesLockOptions = {
  lockSeconds: IN_FLIGHT_LOCK_SECONDS,
  heartbeatMs: (IN_FLIGHT_LOCK_SECONDS * 1000) / 3,
};

/**
 * The fingerprint of a request with a body of bytes: that of its method, path and query, then `+`
 * and the SHA-256 of its bytes. The first part is known before the body is read (the record is
 * claimed with it), the whole only once it has been.
 *
 * @example
 * bytesFingerprint(requestFingerprint({ method, path, query, body: null }), body.sha256());
 */
function bytesFingerprint(requestLine: string, sha256: string): string {
  return `${requestLine}+${sha256}`;
}

/**
 * `runIdempotent` for a mutation whose body is bytes (an upload, design §10): the key covers the
 * bytes too, hashed as they stream, never held. `scope.fingerprint` is the request's without its body
 * (method, path, query); the record is claimed with it, and completed with the body's hash added once
 * the effect has read the body. A request that meets the key:
 * - in flight: 409 `idempotency_key_in_use` when it is the same request line, else 422;
 * - done, for another request line: 422 `idempotency_key_reused`, without reading the body;
 * - done, for the same request line: its body is read through the same hash, without writing:
 *   equal → the stored answer (`replayed`), different → 422 `idempotency_key_reused`.
 * The effect runs outside a transaction (`x-svc.transaction: none`), its record's lock pushed on while
 * it runs (`lock.heartbeatMs`), so a long upload keeps its key. A failure is stored (404/409)
 * only when the whole body was read, so the stored fingerprint always names the bytes; otherwise the
 * record is released and the key may be used again.
 *
 * @example
 * const outcome = await runIdempotentBytes(db, scope, ctx.input.body, () => handler(ctx));
 */
export async function runIdempotentBytes(
  db: Database,
  scope: IdempotencyScope,
  body: IncomingBytes,
  effect: () => Promise<StoredResponse>,
  lock: BytesLockOptions = DEFAULT_LOCK,
): Promise<IdempotentOutcome> {
  const owner = randomUUID();
  body.hashBytes(); // the key covers the bytes: hashed as they stream, before anything reads them
  const existing = await claim(db, scope, body, owner, lock.lockSeconds);
  if (existing) return existing;
  // An upload may take longer than the lock: while it runs, its lock is pushed on, so a retry meets
  // `idempotency_key_in_use` instead of taking the key over and writing a second time.
  const heartbeat = setInterval(() => {
    void extendIdempotencyLock(db, { ...scope, owner, lockSeconds: lock.lockSeconds }).catch(() => {});
  }, lock.heartbeatMs);
  heartbeat.unref?.();
  try {
    const response = await effect();
    // A driver that stopped before the end (it had what it needed) still hashes the rest.
    await readToEnd(body);
    await complete(db, scope, owner, response, body);
    return { ...response, replayed: false };
  } catch (thrown) {
    const error = toApiError(thrown);
    if (error instanceof IdempotencyError) throw thrown;
    if (body.ended && stored(error.status) && error.status >= 400) {
      const envelope = {
        status: error.status,
        headers: error.headers,
        body: error.toEnvelope(scope.requestId ?? ''),
      };
      await complete(db, scope, owner, envelope, body).catch(() => releaseKey(db, scope, owner));
    } else {
      await releaseKey(db, scope, owner);
    }
    throw thrown;
  } finally {
    clearInterval(heartbeat);
  }
}

async function claim(
  db: Database,
  scope: IdempotencyScope,
  body: IncomingBytes,
  owner: string,
  lockSeconds: number,
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
      if (row.fingerprint !== scope.fingerprint) throw reused();
      throw new IdempotencyError(
        'idempotency_key_in_use',
        'a request with this Idempotency-Key is still being processed; retry shortly',
        { headers: { 'retry-after': '1' } },
      );
    }
    if (!row.fingerprint.startsWith(`${scope.fingerprint}+`)) throw reused();
    // The same request line: the bytes decide. They are read (counted, hashed), never written.
    await readToEnd(body);
    if (row.fingerprint !== bytesFingerprint(scope.fingerprint, body.sha256())) throw reused();
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

/** Reads what is left of the body; past its limit, 413 (the body is refused, whatever the key says). */
async function readToEnd(body: IncomingBytes): Promise<void> {
  try {
    await body.drain();
  } catch (thrown) {
    if (thrown instanceof BodyTooLargeError || body.overLimit)
      throw new ApiError(
        'payload_too_large',
        `the body is larger than ${body.limitBytes} bytes, the limit of one transfer`,
        {
          details: { limit_bytes: body.limitBytes },
        },
      );
    throw thrown;
  }
}

async function complete(
  db: Database,
  scope: IdempotencyScope,
  owner: string,
  response: StoredResponse,
  body: IncomingBytes,
): Promise<void> {
  const completed = await completeIdempotencyKey(db, {
    principalId: scope.principalId,
    key: scope.key,
    owner,
    status: response.status,
    headers: response.headers ?? null,
    body: response.body === undefined ? null : JSON.stringify(response.body),
    fingerprint: bytesFingerprint(scope.fingerprint, body.sha256()),
  });
  if (!completed) throw keyLost();
}

function reused(): IdempotencyError {
  return new IdempotencyError(
    'idempotency_key_reused',
    'this Idempotency-Key was used with a different request',
  );
}
