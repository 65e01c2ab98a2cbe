import type { Database } from '../platform/db/database.js';

/**
 * In-process wake-ups for open streams, per key (a workspace id, an operation id), fed by a `NOTIFY`
 * channel whose payload is that key (whichever replica or worker wrote the row). A gap in the
 * notifications (the listening connection came back) wakes every stream, which reads again: nothing
 * is lost, and the streams' poll covers a notification that never came.
 *
 * @example
 * const wakeups = new Wakeups();
 * const unlisten = await wakeups.listen(db, WORKSPACE_EVENTS_CHANNEL);
 * const { woken, cancel } = wakeups.next(workspaceId);
 */
export class Wakeups {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Subscriptions held now (tests: a closed stream leaves none). */
  get size(): number {
    let n = 0;
    for (const set of this.#waiters.values()) n += set.size;
    return n;
  }

  /** Forwards the channel's notifications into {@link notify}; resolves to how to stop. */
  listen(db: Database, channel: string): Promise<() => Promise<void>> {
    return db.listen(channel, (key) => this.notify(key), { onGap: () => this.wakeAll() });
  }

  /** Wakes everything waiting on `key`. */
  notify(key: string): void {
    const set = this.#waiters.get(key);
    if (!set) return;
    this.#waiters.delete(key);
    for (const wake of set) wake();
  }

  /** Wakes every waiter (notifications may have been lost). */
  wakeAll(): void {
    const sets = [...this.#waiters.values()];
    this.#waiters.clear();
    for (const set of sets) for (const wake of set) wake();
  }

  /**
   * Subscribes to the next notification of `key`: `woken` resolves on it; `cancel` drops the
   * subscription (and resolves `woken`) when the caller stops waiting first.
   */
  next(key: string): { woken: Promise<void>; cancel: () => void } {
    let set = this.#waiters.get(key);
    if (!set) {
      set = new Set();
      this.#waiters.set(key, set);
    }
    const held = set;
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => {
      wake = () => {
        held.delete(wake);
        if (held.size === 0 && this.#waiters.get(key) === held) this.#waiters.delete(key);
        resolve();
      };
    });
    held.add(wake);
    return { woken, cancel: wake };
  }
}
