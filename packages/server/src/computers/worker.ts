import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Database } from '../platform/db/database.js';
import { KILL_GRACE_MS, toExecution } from './command.js';
import type { ComputerDriver, DriverAction, DriverOutcome } from './driver.js';
import { DriverError, driverMethodOf, OPERATION_DRIVER_METHOD } from './driver.js';
import type { OperationEvents } from './events.js';
import { OutputLog } from './output-log.js';
import { renderCommandEnd } from './render-events.js';
import type { ComputerRow } from './repositories/computers.js';
import { touchComputerActivity } from './repositories/lifetimes.js';
import { appendOperationOutput } from './repositories/operation-output.js';
import {
  claimOperation,
  clearCommand,
  computerById,
  endOperation,
  handBackLease,
  markStarting,
  recordProgress,
  renewLease,
} from './repositories/operations/worker.js';
import { OPERATION_PENDING_CHANNEL, type OperationRow } from './repositories/operations.js';
import { snapshotOfOperation } from './repositories/snapshots.js';
import { COMPUTER_ACTIONS } from './transitions.js';

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
  /** Lifecycle operations run at once by this replica. */
  concurrency?: number;
  /**
   * `computer.exec` operations (commands, up to an hour each) run at once by this replica, on slots of
   * their own so that long commands never hold up a start or a stop (default 16).
   */
  commandConcurrency?: number;
  /** After this many claims an operation fails instead of running again (a crash loop). */
  maxAttempts?: number;
  /** The clock of computer lifetimes: a running command is activity on its computer (design §4.1). */
  now?: () => number;
}

/** The operation type that runs a command (design §13): it has slots of its own. */
const COMMAND_TYPE = Object.entries(OPERATION_DRIVER_METHOD).find(([, method]) => method === 'exec')?.[0];

/** Thrown inside a run when this replica no longer owns the operation. */
class LeaseLost extends Error {}

/**
 * Runs pending operations. Claims each with a lease (`claimOperation`, which skips what another
 * replica is claiming), so replicas sharing one database never run one operation at the same time;
 * an operation whose replica died is claimed again once its lease expires, and the driver action is
 * re-run (drivers must be idempotent).
 * Every write of a run is fenced by the claim token, so a replica that lost its lease cannot
 * complete, fail or move the computer of an operation someone else now owns: each operation ends
 * exactly once. Computer states follow design §4 (create: creating → starting → running). A
 * `computer.exec` operation runs its command once and is never re-run after a takeover (design §13).
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
  private readonly commandConcurrency: number;
  private readonly maxAttempts: number;
  private readonly now: () => number;
  private readonly running = new Map<
    string,
    { abort: AbortController; done: Promise<void>; token: string; command: boolean }
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
    this.commandConcurrency = options.commandConcurrency ?? 16;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.now = options.now ?? Date.now;
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
      await Promise.all(held.map(([id, run]) => handBackLease(this.db, id, run.token).catch(() => {})));
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

  /** Which kinds of operation this replica has a free slot for now. */
  private freeSlots(): { lifecycle: boolean; command: boolean } {
    const commands = [...this.running.values()].filter((run) => run.command).length;
    return {
      lifecycle: this.running.size - commands < this.concurrency,
      command: commands < this.commandConcurrency,
    };
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopped) {
      let claimedAny = false;
      for (
        let free = this.freeSlots();
        !this.stopped && (free.lifecycle || free.command);
        free = this.freeSlots()
      ) {
        const claimed = await this.claim(free).catch(() => undefined);
        if (!claimed) break;
        claimedAny = true;
        const abort = new AbortController();
        const done = this.execute(claimed.operation, claimed.token, abort).finally(() => {
          this.running.delete(claimed.operation.id);
          this.wake();
        });
        const command = driverMethodOf(claimed.operation.type) === 'exec';
        this.running.set(claimed.operation.id, { abort, done, token: claimed.token, command });
      }
      if (this.stopped) break;
      const free = this.freeSlots();
      if (claimedAny && (free.lifecycle || free.command)) continue;
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

  private async claim(
    free: { lifecycle: boolean; command: boolean } = { lifecycle: true, command: true },
  ): Promise<{ operation: OperationRow; token: string } | undefined> {
    const token = `${this.workerId}/${randomUUID()}`;
    const operation = await claimOperation(this.db, {
      token,
      leaseMs: this.leaseMs,
      commandType: COMMAND_TYPE,
      free,
    });
    return operation ? { operation, token } : undefined;
  }

  private async execute(
    operation: OperationRow,
    token: string,
    abort = new AbortController(),
  ): Promise<void> {
    const renew = setInterval(
      () => {
        renewLease(this.db, operation.id, token, this.leaseMs)
          .then((owned) => owned || abort.abort(new LeaseLost('lease lost')))
          .catch(() => {});
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    // A command's output goes to its log as it is written (design §14), fenced by the claim.
    const output =
      driverMethodOf(operation.type) === 'exec'
        ? new OutputLog({
            append: (events) => appendOperationOutput(this.db, operation.id, token, events),
            maxBytes: operation.command?.max_output_bytes ?? 0,
          })
        : undefined;
    try {
      if (operation.attempts > this.maxAttempts)
        throw new DriverError('internal', `the operation was abandoned after ${this.maxAttempts} attempts`);
      if (output) {
        const result = await this.runCommand(operation, token, abort.signal, output);
        await this.finish(operation, token, undefined, result, output);
      } else if (driverMethodOf(operation.type) === 'snapshot') {
        const taken = await this.takeSnapshot(operation, token, abort.signal);
        await this.finish(operation, token, undefined, null, undefined, undefined, taken);
      } else {
        const outcome = await this.perform(operation, token, abort.signal);
        await this.finish(operation, token, undefined, null, undefined, outcome);
      }
    } catch (error) {
      if (abort.signal.aborted || error instanceof LeaseLost) return; // someone else owns it now, or we are "dead"
      const driverError =
        error instanceof DriverError
          ? error
          : new DriverError('internal', 'the operation failed unexpectedly', { driver: this.driver.name });
      await this.finish(operation, token, driverError, null, output).catch(() => {});
    } finally {
      clearInterval(renew);
      output?.discard();
    }
  }

  /**
   * A `computer.snapshot` operation (design §4.2): the driver copies the computer's files into the
   * operation's snapshot; the computer's state is not changed. It must be `running` or `stopped` when
   * the copy starts. Safe to repeat after a takeover (the driver's `take` is "make it so").
   */
  private async takeSnapshot(
    operation: OperationRow,
    token: string,
    signal: AbortSignal,
  ): Promise<{ sizeBytes: number | null }> {
    const snapshots = this.driver.snapshots;
    if (!snapshots)
      throw new DriverError('unavailable', `the ${this.driver.name} driver keeps no snapshots`, {
        driver: this.driver.name,
      });
    const snapshot = await snapshotOfOperation(this.db, operation.id);
    if (!snapshot) throw new DriverError('not_found', 'the snapshot of this operation no longer exists');
    const computer = await this.computerOf(operation);
    if (computer.state !== 'running' && computer.state !== 'stopped')
      throw new DriverError('invalid_state', `the computer is ${computer.state}; no snapshot was taken`, {
        current_state: computer.state,
        allowed_from: ['running', 'stopped'],
      });
    return snapshots.take(computer, snapshot, {
      signal,
      progress: async (percent) => {
        if (signal.aborted) throw new LeaseLost('lease lost');
        await recordProgress(this.db, operation.id, token, Math.round(Math.min(100, Math.max(0, percent))));
      },
    });
  }

  /** Runs a lifecycle action; what the driver found when it decides the end (`recover`). */
  private async perform(
    operation: OperationRow,
    token: string,
    signal: AbortSignal,
  ): Promise<DriverOutcome | undefined> {
    const action = operation.type.replace(/^computer\./, '') as DriverAction;
    if (!(action in COMPUTER_ACTIONS))
      throw new DriverError('internal', `unknown operation type ${operation.type}`);
    const computer = await this.computerOf(operation);
    const progress = (from: number, to: number) => async (percent: number) => {
      if (signal.aborted) throw new LeaseLost('lease lost');
      const value = Math.round(from + ((to - from) * Math.min(100, Math.max(0, percent))) / 100);
      await recordProgress(this.db, operation.id, token, value);
    };
    if (action === 'create') {
      // A takeover resumes where the dead replica stopped: provisioning is skipped once done.
      if (computer.state === 'creating') {
        await this.driver.run('create', computer, { signal, progress: progress(0, 50) });
        const owned = await markStarting(this.db, operation.id, token, computer.id);
        if (!owned) throw new LeaseLost('lease lost');
      }
      await this.driver.run('start', computer, { signal, progress: progress(50, 100) });
      return undefined;
    }
    const outcome = await this.driver.run(action, computer, { signal, progress: progress(0, 100) });
    return outcome ?? undefined;
  }

  /**
   * A `computer.exec` operation (design §13): runs its command once through the driver's `exec` and
   * returns what it returned. The computer's state is not changed; it must be `running` when the
   * command starts, and the command is stopped and the operation failed if it leaves `running`. A
   * command is not idempotent, so it is never run twice: a second claim (a takeover after the
   * replica running it died or shut down) fails the operation instead of running it again.
   */
  private async runCommand(
    operation: OperationRow,
    token: string,
    signal: AbortSignal,
    output: OutputLog,
  ): Promise<NonNullable<OperationRow['result']>> {
    if (operation.attempts > 1)
      throw new DriverError(
        'unavailable',
        'the server running this command stopped before it ended; a command is never run twice, so it was not started again: run it again if that is safe',
      );
    const command = operation.command;
    // stdin is kept at rest only until the command starts.
    const owned = await clearCommand(this.db, operation.id, token);
    if (!owned) throw new LeaseLost('lease lost');
    if (!command) throw new DriverError('internal', 'the operation has no command to run');
    const computer = await this.computerOf(operation);
    if (computer.state !== 'running')
      throw new DriverError('invalid_state', `the computer is ${computer.state}; the command did not run`, {
        current_state: computer.state,
        allowed_from: ['running'],
      });
    const left = new AbortController();
    // A command runs for as long as an hour: it is activity all along (throttled to a write per 30 s).
    const active = () => touchComputerActivity(this.db, computer.id, this.now());
    await active();
    const watch = setInterval(
      () => {
        active();
        this.computerOf(operation)
          .then((now) => now.state === 'running' || left.abort(now.state))
          .catch(() => {});
      },
      Math.min(1000, Math.max(10, Math.floor(this.leaseMs / 3))),
    );
    const started = performance.now();
    try {
      const result = await this.driver.exec(computer, {
        argv: command.argv,
        ...(command.stdin_base64 === undefined ? {} : { stdin: Buffer.from(command.stdin_base64, 'base64') }),
        timeoutMs: command.timeout_ms,
        maxOutputBytes: command.max_output_bytes,
        onOutput: output.write,
        signal: AbortSignal.any([
          signal,
          left.signal,
          AbortSignal.timeout(command.timeout_ms + KILL_GRACE_MS),
        ]),
      });
      if (left.signal.aborted) throw this.leftRunning(left.signal.reason);
      return { execution: toExecution(result, Math.round(performance.now() - started)) };
    } catch (error) {
      if (signal.aborted) throw new LeaseLost('lease lost');
      if (left.signal.aborted) throw this.leftRunning(left.signal.reason);
      if (error instanceof DriverError) throw error;
      throw new DriverError('internal', 'the command did not report back', { driver: this.driver.name });
    } finally {
      clearInterval(watch);
    }
  }

  private leftRunning(state: unknown): DriverError {
    return new DriverError(
      'invalid_state',
      `the computer left running (it is ${String(state)}) while the command ran; the command was stopped`,
      { current_state: String(state), allowed_from: ['running'] },
    );
  }

  private async computerOf(operation: OperationRow): Promise<ComputerRow> {
    const computer = await computerById(this.db, operation.target_id);
    if (!computer) throw new DriverError('not_found', 'the computer of this operation no longer exists');
    return computer;
  }

  /**
   * Ends the operation once, if this claim still owns it, with the command's `result` for a
   * `computer.exec` (and its output log's last chunks and final event, in the same transaction); a
   * lifecycle action also moves its computer.
   */
  private async finish(
    operation: OperationRow,
    token: string,
    failure: DriverError | undefined,
    result: OperationRow['result'] = null,
    output?: OutputLog,
    outcome?: DriverOutcome,
    taken?: { sizeBytes: number | null },
  ): Promise<void> {
    const method = driverMethodOf(operation.type);
    const lifecycle = method === 'run';
    const action = operation.type.replace(/^computer\./, '') as DriverAction;
    // Only `recover` ends where the driver found the computer; the others where their rule says.
    const target = action === 'recover' && outcome ? outcome.state : COMPUTER_ACTIONS[action]?.to;
    const error = failure ? { code: failure.code, message: failure.message, details: failure.details } : null;
    const ending = failure ? null : result;
    const ended = await endOperation(this.db, operation.id, token, {
      state: failure ? 'failed' : 'succeeded',
      error,
      result: ending,
      output: output && [
        ...(await output.finish()),
        renderCommandEnd(operation.id, { error, result: ending }),
      ],
      snapshot:
        method === 'snapshot'
          ? { state: failure ? 'failed' : 'ready', sizeBytes: taken?.sizeBytes ?? null }
          : undefined,
      computer: lifecycle
        ? {
            id: operation.target_id,
            workspaceId: operation.workspace_id,
            state: failure || !target ? 'failed' : target,
          }
        : null,
    });
    if (ended) this.events?.notify(operation.id);
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
