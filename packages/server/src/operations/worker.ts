import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Database } from '../db/database.js';
import { releaseComputerSlot } from '../repositories/computers.js';
import type { ComputerDriver, DriverAction } from './driver.js';
import { DriverError } from './driver.js';
import type { OperationEvents } from './events.js';
import { OPERATION_DONE_CHANNEL, OPERATION_PENDING_CHANNEL } from './events.js';
import type { ComputerRow, OperationRow } from './records.js';
import { COMPUTER_ACTIONS } from './records.js';

export interface WorkerOptions {
  db: Database;
  driver: ComputerDriver;
  /** Wakes this replica's `?wait=` long-polls when an operation ends. */
  events?: OperationEvents;
  /** Names this replica in `claimed_by` (default host:pid). */
  workerId?: string;
  /** How long a claim lasts without renewal; renewed every third of it (`SVC_OPERATION_LEASE_MS`). */
  leaseMs: number;
  /** How often to look for work when nothing wakes the worker. */
  pollMs?: number;
  /** Operations run at once by this replica. */
  concurrency?: number;
  /** After this many claims an operation fails instead of running again (a crash loop). */
  maxAttempts?: number;
}

/** Thrown inside a run when this replica no longer owns the operation. */
class LeaseLost extends Error {}

/**
 * Runs pending operations. Claims with `SELECT … FOR UPDATE SKIP LOCKED` and a lease, so replicas
 * sharing one database never run one operation at the same time; an operation whose replica died is
 * claimed again once its lease expires, and the driver action is re-run (drivers must be idempotent).
 * Every write of a run is fenced by the claim token, so a replica that lost its lease cannot
 * complete, fail or move the computer of an operation someone else now owns: each operation ends
 * exactly once. Computer states follow design §4 (create: creating → starting → running).
 *
 * @example
 * const worker = new OperationWorker({ db, driver: new SimulatedDriver({ stepMs: 500 }), events, leaseMs: 30_000 });
 * await worker.start();
 * // …
 * await worker.stop();
 */
export class OperationWorker {
  readonly workerId: string;
  private readonly db: Database;
  private readonly driver: ComputerDriver;
  private readonly events: OperationEvents | undefined;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly running = new Map<
    string,
    { abort: AbortController; done: Promise<void>; token: string }
  >();
  private stopped = true;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(options: WorkerOptions) {
    this.db = options.db;
    this.driver = options.driver;
    this.events = options.events;
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}`;
    this.leaseMs = options.leaseMs;
    this.pollMs = options.pollMs ?? 1000;
    this.concurrency = options.concurrency ?? 4;
    this.maxAttempts = options.maxAttempts ?? 5;
  }

  /** Starts claiming; new operations (NOTIFY from any replica) wake it at once. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.unlisten = await this.db.listen(OPERATION_PENDING_CHANNEL, () => this.wake());
    this.loop = this.claimLoop();
  }

  /** Looks for work now instead of at the next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Operations this replica is running now (a metrics gauge). */
  get inFlight(): number {
    return this.running.size;
  }

  /**
   * Stops claiming and waits for the operations in hand to finish. With `timeoutMs`, what is still
   * running then is stopped and handed back (its lease ends now), so another replica takes it over at
   * once instead of after the lease; the driver action is run again there (drivers are idempotent).
   */
  async stop(options: { timeoutMs?: number } = {}): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    const all = Promise.all([...this.running.values()].map((run) => run.done));
    if (options.timeoutMs === undefined || (await within(all, options.timeoutMs))) {
      await all;
    } else {
      const held = [...this.running.entries()];
      for (const [, run] of held) run.abort.abort(new LeaseLost('shutting down'));
      await Promise.all(held.map(([, run]) => run.done));
      await Promise.all(
        held.map(([id, run]) =>
          this.db
            .query(
              `UPDATE operations SET lease_until = now() WHERE id = $1 AND claimed_by = $2 AND state = 'running'`,
              [id, run.token],
            )
            .catch(() => {}),
        ),
      );
    }
    await this.unlisten?.();
  }

  /**
   * Simulates this replica dying: stops claiming, renewing and writing, abandons what it holds
   * without a word to the database. Its leases then expire and another worker takes over. Tests only.
   */
  async crash(): Promise<void> {
    this.stopped = true;
    this.wake();
    for (const run of this.running.values()) run.abort.abort(new LeaseLost('crashed'));
    await this.loop;
    await Promise.all([...this.running.values()].map((run) => run.done));
    await this.unlisten?.();
  }

  /** Claims and runs at most one operation; resolves when it has ended. For tests and tools. */
  async runOnce(): Promise<OperationRow | undefined> {
    const claimed = await this.claim();
    if (!claimed) return undefined;
    await this.execute(claimed.operation, claimed.token);
    return claimed.operation;
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopped) {
      let claimedAny = false;
      while (!this.stopped && this.running.size < this.concurrency) {
        const claimed = await this.claim().catch(() => undefined);
        if (!claimed) break;
        claimedAny = true;
        const abort = new AbortController();
        const done = this.execute(claimed.operation, claimed.token, abort).finally(() => {
          this.running.delete(claimed.operation.id);
          this.wake();
        });
        this.running.set(claimed.operation.id, { abort, done, token: claimed.token });
      }
      if (this.stopped) break;
      if (claimedAny && this.running.size < this.concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  private async claim(): Promise<{ operation: OperationRow; token: string } | undefined> {
    const token = `${this.workerId}/${randomUUID()}`;
    const { rows } = await this.db.query<OperationRow>(
      `UPDATE operations
          SET state = 'running', claimed_by = $1, lease_until = now() + make_interval(secs => $2),
              attempts = attempts + 1, started_at = coalesce(started_at, now()), updated_at = now()
        WHERE id = (SELECT id FROM operations
                     WHERE state = 'pending' OR (state = 'running' AND lease_until < now())
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`,
      [token, this.leaseMs / 1000],
    );
    const operation = rows[0];
    return operation ? { operation, token } : undefined;
  }

  private async execute(
    operation: OperationRow,
    token: string,
    abort = new AbortController(),
  ): Promise<void> {
    const renew = setInterval(
      () => {
        this.fenced(
          `UPDATE operations SET lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND claimed_by = $2 AND state = 'running'`,
          operation,
          token,
          [this.leaseMs / 1000],
        )
          .then((owned) => owned || abort.abort(new LeaseLost('lease lost')))
          .catch(() => {});
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    try {
      if (operation.attempts > this.maxAttempts)
        throw new DriverError('internal', `the operation was abandoned after ${this.maxAttempts} attempts`);
      await this.perform(operation, token, abort.signal);
      await this.finish(operation, token, undefined);
    } catch (error) {
      if (abort.signal.aborted || error instanceof LeaseLost) return; // someone else owns it now, or we are "dead"
      const driverError =
        error instanceof DriverError
          ? error
          : new DriverError('internal', 'the operation failed unexpectedly', { driver: this.driver.name });
      await this.finish(operation, token, driverError).catch(() => {});
    } finally {
      clearInterval(renew);
    }
  }

  private async perform(operation: OperationRow, token: string, signal: AbortSignal): Promise<void> {
    const action = operation.type.replace(/^computer\./, '') as DriverAction;
    if (!(action in COMPUTER_ACTIONS))
      throw new DriverError('internal', `unknown operation type ${operation.type}`);
    const { rows } = await this.db.query<ComputerRow>('SELECT * FROM computers WHERE id = $1', [
      operation.target_id,
    ]);
    const computer = rows[0];
    if (!computer) throw new DriverError('not_found', 'the computer of this operation no longer exists');
    const progress = (from: number, to: number) => async (percent: number) => {
      if (signal.aborted) throw new LeaseLost('lease lost');
      const value = Math.round(from + ((to - from) * Math.min(100, Math.max(0, percent))) / 100);
      await this.fenced(
        `UPDATE operations SET progress = greatest(progress, $3), updated_at = now() WHERE id = $1 AND claimed_by = $2`,
        operation,
        token,
        [value],
      );
    };
    if (action === 'create') {
      // A takeover resumes where the dead replica stopped: provisioning is skipped once done.
      if (computer.state === 'creating') {
        await this.driver.run('create', computer, { signal, progress: progress(0, 50) });
        const owned = await this.fenced(
          `UPDATE computers SET state = 'starting', updated_at = now()
            WHERE id = $3 AND EXISTS (SELECT 1 FROM operations WHERE id = $1 AND claimed_by = $2 AND state = 'running')`,
          operation,
          token,
          [computer.id],
        );
        if (!owned) throw new LeaseLost('lease lost');
      }
      await this.driver.run('start', computer, { signal, progress: progress(50, 100) });
      return;
    }
    await this.driver.run(action, computer, { signal, progress: progress(0, 100) });
  }

  /** Ends the operation (and moves its computer) once, if this claim still owns it. */
  private async finish(
    operation: OperationRow,
    token: string,
    failure: DriverError | undefined,
  ): Promise<void> {
    const action = operation.type.replace(/^computer\./, '') as DriverAction;
    const target = COMPUTER_ACTIONS[action]?.to;
    const ended = await this.db.transaction(async (tx) => {
      const { rowCount } = await tx.query(
        `UPDATE operations
            SET state = $3, progress = CASE WHEN $3 = 'succeeded' THEN 100 ELSE progress END, error = $4,
                completed_at = now(), lease_until = NULL, updated_at = now()
          WHERE id = $1 AND claimed_by = $2 AND state = 'running'`,
        [
          operation.id,
          token,
          failure ? 'failed' : 'succeeded',
          failure ? { code: failure.code, message: failure.message, details: failure.details } : null,
        ],
      );
      if (rowCount !== 1) return false;
      const state = failure || !target ? 'failed' : target;
      const moved = await tx.query(
        `UPDATE computers
            SET state = $2, current_operation_id = NULL, updated_at = now(),
                started_at = CASE WHEN $2 = 'running' THEN now() ELSE started_at END,
                stopped_at = CASE WHEN $2 = 'stopped' THEN now() ELSE stopped_at END,
                deleted_at = CASE WHEN $2 = 'deleted' THEN now() ELSE deleted_at END
          WHERE id = $1 AND current_operation_id = $3`,
        [operation.target_id, state, operation.id],
      );
      // Only here does a computer become `deleted`: its place in the quota is free again.
      if (state === 'deleted' && moved.rowCount === 1) await releaseComputerSlot(tx, operation.workspace_id);
      await tx.query('SELECT pg_notify($1, $2)', [OPERATION_DONE_CHANNEL, operation.id]);
      return true;
    });
    if (ended) this.events?.notify(operation.id);
  }

  private async fenced(
    sql: string,
    operation: OperationRow,
    token: string,
    extra: unknown[],
  ): Promise<boolean> {
    const { rowCount } = await this.db.query(sql, [operation.id, token, ...extra]);
    return rowCount === 1;
  }
}

/** Whether `promise` settles within `ms`. */
function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}
