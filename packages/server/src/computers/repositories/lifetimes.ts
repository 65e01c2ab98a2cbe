import type { Queryable } from '../../platform/db/database.js';
import type { ComputerRow } from './computers.js';

// The statements of computer lifetimes (design §4.1): activity, and the check that ends computers.

/** Activity is written at most this often per computer: the idle timeout's floor is 60 s. */
const ACTIVITY_THROTTLE_MS = 30_000;

/** Computers whose last touch this process remembers; past it the memory starts over. */
const MAX_REMEMBERED = 10_000;
const lastTouched = new Map<string, number>();

/**
 * Records activity on a computer (a command, a file moved, an output stream opened, a start): its
 * `last_active_at` moves to `now`, at most once per 30 s per computer. This process skips the
 * statement within 30 s of its own last touch; the statement itself moves the column only when it is
 * 30 s older than `now`, so replicas together write at most about once per 30 s too. No event is
 * written (migration 015 leaves the column out of the event trigger). Never throws: activity is
 * worth a try, not a failed request.
 *
 * @example
 * await touchComputerActivity(ctx.db, computer.id, Date.now());
 */
export async function touchComputerActivity(db: Queryable, computerId: string, now: number): Promise<void> {
  const last = lastTouched.get(computerId);
  if (last !== undefined && now - last < ACTIVITY_THROTTLE_MS && now >= last) return;
  if (lastTouched.size >= MAX_REMEMBERED) lastTouched.clear();
  lastTouched.set(computerId, now);
  await db
    .query(
      `UPDATE computers SET last_active_at = $2
        WHERE id = $1 AND state <> 'deleted' AND last_active_at < $2::timestamptz - make_interval(secs => $3)`,
      [computerId, new Date(now), ACTIVITY_THROTTLE_MS / 1000],
    )
    .catch(() => {});
}

/** Forgets this process's throttle (tests that move the clock back). */
export function forgetActivity(): void {
  lastTouched.clear();
}

/**
 * The SQL condition of a computer whose lifetime has ended at `$1`: running past its idle timeout,
 * or past its expiry while an end can still act on it (running or stopped; failed too when the end
 * is a delete). Computers in a transient state wait for their operation to end.
 */
const ENDED = `(
  (state = 'running' AND idle_timeout_seconds IS NOT NULL
    -- The shortest idle timeout is 60 s: a range on the partial index computers_idle (migration 015).
    AND last_active_at <= $1::timestamptz - interval '60 seconds'
    AND last_active_at + make_interval(secs => idle_timeout_seconds) <= $1::timestamptz)
  OR (expires_at IS NOT NULL AND expires_at <= $1::timestamptz
    AND (state IN ('running', 'stopped') OR (state = 'failed' AND on_end = 'delete'))))`;

/**
 * Up to `limit` ids of computers whose lifetime has ended at `now`, oldest first. Read without a lock:
 * {@link lockEndedComputer} decides, one computer at a time.
 *
 * @example
 * const ids = await endedComputerIds(db, new Date(), 100);
 */
export async function endedComputerIds(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM computers WHERE ${ENDED} ORDER BY id LIMIT $2`,
    [now, limit],
  );
  return rows.map((row) => row.id);
}

/**
 * The computer, locked to this transaction, when its lifetime has still ended at `now`; `undefined`
 * when another replica holds it (`SKIP LOCKED`: it is acting on it now) or has acted already (its
 * state or its expiry moved).
 *
 * @example
 * const computer = await lockEndedComputer(tx, id, now);
 */
export async function lockEndedComputer(
  tx: Queryable,
  computerId: string,
  now: Date,
): Promise<ComputerRow | undefined> {
  const { rows } = await tx.query<ComputerRow>(
    `SELECT * FROM computers WHERE id = $2 AND ${ENDED} FOR UPDATE SKIP LOCKED`,
    [now, computerId],
  );
  return rows[0];
}

/**
 * Clears a computer's expiry: it fires once (design §4.1).
 *
 * @example
 * await clearExpiry(tx, computer.id);
 */
export async function clearExpiry(tx: Queryable, computerId: string): Promise<void> {
  await tx.query('UPDATE computers SET expires_at = NULL, updated_at = now() WHERE id = $1', [computerId]);
}
