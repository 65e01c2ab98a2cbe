import { randomUUID } from 'node:crypto';
import type { Database } from '../platform/db/database.js';
import { ApiError, toApiError } from '../platform/errors.js';
import {
  claimKey,
  IdempotencyError,
  type IdempotencyScope,
  type IdempotentOutcome,
  IN_FLIGHT_LOCK_SECONDS,
  keyLost,
  releaseKey,
  reusedKey,
  type StoredResponse,
  stored,
} from '../platform/idempotency.js';
import { completeIdempotencyKey, extendIdempotencyLock } from '../platform/repositories/idempotency-keys.js';
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

/** {@link claimKey} for a body of bytes: a done record is this request's when its bytes hash the same. */
function claim(
  db: Database,
  scope: IdempotencyScope,
  body: IncomingBytes,
  owner: string,
  lockSeconds: number,
): Promise<IdempotentOutcome | undefined> {
  return claimKey(db, scope, owner, {
    lockSeconds,
    sameRequest: async (row) => {
      if (!row.fingerprint.startsWith(`${scope.fingerprint}+`)) throw reusedKey();
      // The same request line: the bytes decide. They are read (counted, hashed), never written.
      await readToEnd(body);
      if (row.fingerprint !== bytesFingerprint(scope.fingerprint, body.sha256())) throw reusedKey();
    },
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
