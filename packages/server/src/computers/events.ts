import type { Database, Queryable } from '../platform/db/database.js';
import { OPERATION_DONE_CHANNEL, type OperationRow, operationById } from './repositories/operations.js';
import { TERMINAL_OPERATION_STATES } from './states.js';

/**
 * In-process wake-ups for `?wait=` long-polls. Fed by this replica's worker, and by NOTIFY from
 * the database (`bridge`) when another replica finishes an operation. Waiters also poll the
 * database, so a lost notification only delays an answer, never loses it.
 *
 * @example
 * const events = new OperationEvents();
 * await events.bridge(db);
 * const operation = await waitForOperation(db, events, id, 30_000);
 */
export class OperationEvents {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Wakes everything waiting for `operationId`. */
  notify(operationId: string): void {
    const set = this.waiters.get(operationId);
    if (!set) return;
    this.waiters.delete(operationId);
    for (const wake of set) wake();
  }

  /** Resolves on the next `notify(operationId)` or after `timeoutMs`, whichever comes first. */
  next(operationId: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(operationId);
      if (!set) {
        set = new Set();
        this.waiters.set(operationId, set);
      }
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(operationId) === set) this.waiters.delete(operationId);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, timeoutMs));
      timer.unref();
      set.add(wake);
    });
  }

  /** Forwards `NOTIFY svc_operation_done` from the database (other replicas) into `notify`. */
  async bridge(db: Database): Promise<() => Promise<void>> {
    return db.listen(OPERATION_DONE_CHANNEL, (id) => this.notify(id));
  }
}

/**
 * Reads an operation, waiting up to `timeoutMs` for it to finish (`GET /operations/{id}?wait=N`),
 * then answers as it stands. `undefined` when there is no such operation.
 *
 * @example
 * const operation = await waitForOperation(db, events, id, Math.min(wait, 60) * 1000);
 */
export async function waitForOperation(
  db: Queryable,
  events: OperationEvents,
  operationId: string,
  timeoutMs: number,
  options: { pollMs?: number } = {},
): Promise<OperationRow | undefined> {
  const deadline = Date.now() + timeoutMs;
  const pollMs = options.pollMs ?? 1000;
  for (;;) {
    const remaining = deadline - Date.now();
    // Subscribe before reading, so a finish between the read and the wait is not missed.
    const woken = remaining > 0 ? events.next(operationId, Math.min(pollMs, remaining)) : undefined;
    const operation = await operationById(db, operationId);
    // An unneeded `woken` is left to its timer (≤ pollMs, unref'd): cheaper than cancelling it.
    if (!operation || TERMINAL_OPERATION_STATES.has(operation.state) || !woken) return operation;
    await woken;
  }
}
