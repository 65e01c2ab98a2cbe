import { availableParallelism } from 'node:os';

/**
 * A cap on concurrent password checks (scrypt at full cost, ~100 ms of a libuv thread each). scrypt
 * and the signing of tokens share libuv's small thread pool (4 threads by default), so a burst of
 * anonymous sign-in posts would otherwise queue every `/auth/token` behind it. When all slots are
 * busy the caller answers `429` with `Retry-After` at once rather than queueing: the work an
 * anonymous client can cause stays bounded, whatever the burst.
 *
 * @example
 * const gate = new HashingGate(2);
 * const result = await gate.tryRun(() => checkLocalPassword(db, email, password));
 * if (result === HashingGate.BUSY) return tooMany(1);
 */
export class HashingGate {
  /** What {@link tryRun} answers when no slot was free (the work did not run). */
  static readonly BUSY: unique symbol = Symbol('busy');
  private running = 0;

  /** `slots` checks at a time; default half the cores, at least 1 and at most 2 (half the libuv pool). */
  constructor(readonly slots: number = defaultSlots()) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error('slots must be a whole number ≥ 1');
  }

  /** Runs `work` when a slot is free, else answers {@link HashingGate.BUSY} without running it. */
  async tryRun<T>(work: () => Promise<T>): Promise<T | typeof HashingGate.BUSY> {
    if (this.running >= this.slots) return HashingGate.BUSY;
    this.running += 1;
    try {
      return await work();
    } finally {
      this.running -= 1;
    }
  }
}

function defaultSlots(): number {
  return Math.min(2, Math.max(1, Math.floor(availableParallelism() / 2)));
}
