import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ComputerDriver,
  ComputerSnapshots,
  DriverAction,
  DriverComputer,
  DriverContext,
  DriverOutcome,
  ExecRequest,
  ExecResult,
  SnapshotTarget,
} from './driver.js';
import { DriverError } from './driver.js';
import { SimulatedFiles } from './files/simulated-files.js';
import { type SimDirectory, treeBytes } from './files/simulated-tree.js';
import { SimulatedTerminals } from './terminals/simulated.js';

/** The label that makes the simulated driver fail an action: `sim-fail=start` (or `always`). */
export const SIM_FAIL_LABEL = 'sim-fail';

/**
 * The label that says what a SIMULATED engine holds when a failed computer is recovered:
 * `sim-recover=running` (a container that runs), `stopped` (one that does not; the default) or
 * `missing` (none: a new one is made, left stopped).
 */
const SIM_RECOVER_LABEL = 'sim-recover';

export interface SimulatedDriverOptions {
  /** Time of one step; every action takes `steps` of them (`SVC_SIM_STEP_MS`). */
  stepMs: number;
  steps?: number;
  /** A test hook deciding failures, in addition to the `sim-fail` label. */
  shouldFail?(action: DriverAction, computer: DriverComputer): boolean;
  /** Bytes of files under /home per computer, held in memory (default 10 GiB). */
  filesQuotaBytes?: number;
  /** Most entries of one uploaded archive (default 10,000; `SVC_FILES_MAX_ENTRIES`). */
  filesMaxArchiveEntries?: number;
  /**
   * SIMULATED fleet (`SVC_SIM_FLEET=on`): creates are placed on the hosts of the `hosts` table as under
   * the Docker driver (design §4.4), so placement can be tested and measured without Engines. No Engine
   * is asked; nothing writes the hosts' heartbeats but the operator (a test, a bench).
   */
  fleet?: boolean;
}

/**
 * A SIMULATED driver: no machine exists anywhere. Each action sleeps `steps × stepMs`, reporting
 * progress after each step, and fails halfway when the computer carries the label `sim-fail` whose
 * value is the action (`create`, `start`, `stop`, `restart`, `delete`, `recover`) or `always`, or when
 * `shouldFail` says so. `recover` ends where the label `sim-recover` says ({@link SIM_RECOVER_LABEL}). It is the default driver, and says so in its name.
 *
 * Files are SIMULATED too: an in-memory tree per computer ({@link SimulatedFiles}).
 *
 * Commands (`exec`) are SIMULATED too: nothing runs anywhere. A handful of builtins answer
 * (see {@link SIMULATED_COMMANDS}); any other program exits 127 with "command not found (simulated
 * driver)" on stderr.
 *
 * @example
 * const driver = new SimulatedDriver({ stepMs: config.simStepMs });
 */
export class SimulatedDriver implements ComputerDriver {
  readonly name = 'simulated';
  /** Whether creates are placed on hosts (`SVC_SIM_FLEET`; see {@link SimulatedDriverOptions.fleet}). */
  readonly fleet: boolean;
  private readonly stepMs: number;
  private readonly steps: number;
  private readonly shouldFail: SimulatedDriverOptions['shouldFail'];
  /** SIMULATED terminals: a line discipline over a tiny shell (terminals/simulated.ts). */
  readonly terminals = new SimulatedTerminals();
  /** SIMULATED files: an in-memory tree per computer, forgotten when the computer is deleted. */
  readonly files: SimulatedFiles;
  /** SIMULATED snapshots: a copy of `/home` per snapshot, in this process's memory. */
  readonly snapshots: ComputerSnapshots;
  private readonly kept = new Map<string, { home: SimDirectory; bytes: number }>();

  constructor(options: SimulatedDriverOptions) {
    this.fleet = options.fleet === true;
    this.files = new SimulatedFiles({
      ...(options.filesQuotaBytes === undefined ? {} : { quotaBytes: options.filesQuotaBytes }),
      ...(options.filesMaxArchiveEntries === undefined
        ? {}
        : { maxArchiveEntries: options.filesMaxArchiveEntries }),
    });
    this.stepMs = options.stepMs;
    this.steps = Math.max(1, options.steps ?? 4);
    this.shouldFail = options.shouldFail;
    this.snapshots = {
      take: (computer, snapshot, context) => this.take(computer, snapshot, context),
      remove: async (snapshot) => {
        this.kept.delete(snapshot.id);
      },
    };
  }

  /** Every catalogue image: SIMULATED computers run none of them, so none is missing. */
  async imageAvailable(): Promise<boolean> {
    return true;
  }

  /** Whether a snapshot's copy is held here (tests: deleting a snapshot or a workspace removes it). */
  holdsSnapshot(snapshotId: string): boolean {
    return this.kept.has(snapshotId);
  }

  /**
   * SIMULATED snapshot: copies the computer's `/home` tree now, then takes the action's steps (so a
   * snapshot is `creating` for a while, as on an engine). The label `sim-fail=snapshot` fails it.
   */
  private async take(
    computer: DriverComputer,
    snapshot: SnapshotTarget,
    context: DriverContext,
  ): Promise<{ sizeBytes: number }> {
    const home = this.files.copyHome(computer);
    await this.simulateSteps('snapshot', computer, context);
    const bytes = treeBytes(home);
    this.kept.set(snapshot.id, { home, bytes });
    return { sizeBytes: bytes };
  }

  /** Sleeps `steps × stepMs`, reporting progress, failing halfway when told to fail `action`. */
  private async simulateSteps(
    action: string,
    computer: DriverComputer,
    context: DriverContext,
  ): Promise<void> {
    const label = computer.labels[SIM_FAIL_LABEL];
    const fail =
      label === action ||
      label === 'always' ||
      (this.shouldFail?.(action as DriverAction, computer) ?? false);
    for (let step = 1; step <= this.steps; step++) {
      await sleep(this.stepMs, undefined, { signal: context.signal });
      if (fail && step * 2 >= this.steps) {
        throw new DriverError(
          'internal',
          `simulated failure: ${action} failed (the simulated driver was told to fail it)`,
          {
            driver: this.name,
            action,
          },
        );
      }
      await context.progress(Math.round((step / this.steps) * 100));
    }
  }

  async run(
    action: DriverAction,
    computer: DriverComputer,
    context: DriverContext,
  ): Promise<DriverOutcome | undefined> {
    await this.simulateSteps(action, computer, context);
    // SIMULATED create from a snapshot: the computer starts with the snapshot's copy of `/home`.
    if (action === 'create' && computer.snapshot_id) {
      const kept = this.kept.get(computer.snapshot_id);
      if (!kept)
        throw new DriverError('unavailable', 'the snapshot is not held by this simulated driver', {
          driver: this.name,
        });
      this.files.seedHome(computer, kept.home);
    }
    if (action === 'delete') this.files.forget(computer.id);
    // SIMULATED recovery: no engine to inspect, the `sim-recover` label says what it would have found.
    if (action === 'recover')
      return { state: computer.labels[SIM_RECOVER_LABEL] === 'running' ? 'running' : 'stopped' };
    return undefined;
  }

  /** SIMULATED: see {@link simulatedExec}; nothing runs on any machine. */
  exec(computer: DriverComputer, request: ExecRequest): Promise<ExecResult> {
    return simulatedExec(computer, request);
  }
}

/** SIMULATED: how many pieces a command's output is written in, per stream, and the pause between them. */
const SIMULATED_OUTPUT_PIECES = 4;
const SIMULATED_OUTPUT_PAUSE_MS = 10;

/**
 * SIMULATED writing: hands each stream's (capped) output to `onOutput` in up to
 * {@link SIMULATED_OUTPUT_PIECES} pieces, {@link SIMULATED_OUTPUT_PAUSE_MS} apart, stdout first. The
 * pieces are cut at byte counts, not characters, as a pipe may cut them. Without `onOutput` (the
 * short form of exec) nothing waits.
 */
async function writeSimulatedOutput(
  request: ExecRequest,
  stdout: Uint8Array,
  stderr: Uint8Array,
): Promise<void> {
  const { onOutput } = request;
  if (!onOutput) return;
  for (const [stream, bytes] of [
    ['stdout', stdout],
    ['stderr', stderr],
  ] as const) {
    const piece = Math.max(1, Math.ceil(bytes.length / SIMULATED_OUTPUT_PIECES));
    for (let at = 0; at < bytes.length; at += piece) {
      onOutput(stream, bytes.slice(at, at + piece));
      await sleep(SIMULATED_OUTPUT_PAUSE_MS, undefined, { signal: request.signal });
    }
  }
}

/** The programs the simulated driver's `exec` knows; anything else exits 127. */
export const SIMULATED_COMMANDS = ['echo', 'cat', 'true', 'false', 'sleep', 'uname'] as const;

const encoder = new TextEncoder();

/**
 * SIMULATED `exec`: the builtins of {@link SIMULATED_COMMANDS}, run in this process on the request
 * alone. `echo` prints its arguments, `cat` its stdin, `true`/`false` exit 0/1, `sleep N` waits N
 * seconds (killed at the timeout: `timedOut`, exit 124), `uname` names a simulated Linux.
 */
async function simulatedExec(computer: DriverComputer, request: ExecRequest): Promise<ExecResult> {
  const [program, ...args] = request.argv;
  let stdout: Uint8Array = new Uint8Array();
  let stderr: Uint8Array = new Uint8Array();
  let exitCode = 0;
  let timedOut = false;
  switch (program) {
    case 'echo':
      stdout = encoder.encode(`${args.join(' ')}\n`);
      break;
    case 'cat':
      stdout = request.stdin ?? new Uint8Array();
      break;
    case 'true':
      break;
    case 'false':
      exitCode = 1;
      break;
    case 'uname':
      stdout = encoder.encode(
        args.includes('-a') ? `Linux ${computer.name} 0.0.0-simulated x86_64 GNU/Linux\n` : 'Linux\n',
      );
      break;
    case 'sleep': {
      const seconds = Number(args[0]);
      if (args.length !== 1 || !Number.isFinite(seconds) || seconds < 0) {
        stderr = encoder.encode('sleep: expects one number of seconds (simulated driver)\n');
        exitCode = 1;
        break;
      }
      const wanted = seconds * 1000;
      await sleep(Math.min(wanted, request.timeoutMs), undefined, { signal: request.signal });
      if (wanted > request.timeoutMs) {
        timedOut = true;
        exitCode = 124;
      }
      break;
    }
    default:
      stderr = encoder.encode(`${program}: command not found (simulated driver)\n`);
      exitCode = 127;
  }
  const limit = request.maxOutputBytes;
  await writeSimulatedOutput(request, stdout.subarray(0, limit), stderr.subarray(0, limit));
  return {
    exitCode,
    stdout: stdout.subarray(0, limit),
    stderr: stderr.subarray(0, limit),
    stdoutTruncated: stdout.length > limit,
    stderrTruncated: stderr.length > limit,
    timedOut,
  };
}
