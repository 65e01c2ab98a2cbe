import type { Database } from '../platform/db/database.js';
import { requestComputerAction } from './records.js';
import { clearExpiry, endedComputerIds, lockEndedComputer } from './repositories/lifetimes.js';
import type { OperationRow } from './repositories/operations.js';

export interface LifetimeCheckOptions {
  db: Database;
  /** Milliseconds since the epoch: tests move it to make computers idle or expired. */
  now?: () => number;
  /** How often to check (`SVC_LIFETIME_CHECK_MS`, default 5000). */
  intervalMs?: number;
  /** The most computers one check acts on; the rest wait for the next (default 100). */
  batch?: number;
  /** Where a failed check is reported. */
  log?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Ends computers whose lifetime is over (design §4.1): every `intervalMs`, running computers past
 * their idle timeout and computers past their expiry get one `computer.stop` or `computer.delete`
 * operation (their `on_end`) with its `trigger`, started by the same code as a user's request
 * (`requestComputerAction`: the state rules, `current_operation_id`, the events), `created_by` the
 * computer's creator. Runs on every replica: each computer is decided under its row lock taken with
 * `SKIP LOCKED`, and only while its lifetime is still over, so a computer one replica is ending is
 * skipped by the others, and once ended (a transient state, its expiry cleared) it no longer matches:
 * exactly one operation per end. A computer with an operation in progress is left for a later check.
 *
 * @example
 * const check = new LifetimeCheck({ db, intervalMs: config.lifetimeCheckMs });
 * check.start();
 * await check.stop();
 */
export class LifetimeCheck {
  private readonly db: Database;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly batch: number;
  private readonly log: NonNullable<LifetimeCheckOptions['log']>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(options: LifetimeCheckOptions) {
    this.db = options.db;
    this.now = options.now ?? Date.now;
    this.intervalMs = options.intervalMs ?? 5000;
    this.batch = options.batch ?? 100;
    this.log = options.log ?? (() => {});
  }

  /** Checks every `intervalMs` (a check still running is not started twice). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.checkOnce()
        .catch((error: unknown) => this.log('lifetime check failed', { error: String(error) }))
        .finally(() => {
          this.running = undefined;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops checking and waits for a check in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /**
   * One check: the operations it started (at most `batch`). Each computer in a transaction of its
   * own, so one that fails does not hold up the rest.
   */
  async checkOnce(): Promise<OperationRow[]> {
    const now = new Date(this.now());
    const started: OperationRow[] = [];
    for (const id of await endedComputerIds(this.db, now, this.batch)) {
      const operation = await this.end(id, now).catch((error: unknown) => {
        this.log('lifetime check: a computer could not be ended', { computer: id, error: String(error) });
        return undefined;
      });
      if (operation) started.push(operation);
    }
    return started;
  }

  private end(computerId: string, now: Date): Promise<OperationRow | undefined> {
    return this.db.transaction(async (tx) => {
      const computer = await lockEndedComputer(tx, computerId, now);
      if (!computer) return undefined;
      const expired = computer.expires_at !== null && computer.expires_at.getTime() <= now.getTime();
      // An expiry fires once, whatever it finds.
      if (expired) await clearExpiry(tx, computer.id);
      // A stop that finds the computer stopped (or failed) has nothing left to do.
      if (computer.on_end === 'stop' && computer.state !== 'running') return undefined;
      return requestComputerAction(tx, computer.id, computer.on_end, computer.created_by, {
        trigger: expired ? 'expiry' : 'idle_timeout',
      });
    });
  }
}
