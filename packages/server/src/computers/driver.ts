import type { Schema } from '@svc/contract';
import type { Queryable } from '../platform/db/database.js';
import type { ErrorCode } from '../platform/errors.js';
import type { DriverComputer } from './computer.js';
import type { ComputerFiles } from './files/driver.js';
import type { ProcessDriver } from './processes/driver.js';
import type { TerminalDriver } from './terminals/driver.js';

/**
 * Which driver method carries each of the spec's operation types: `run` for the lifecycle actions
 * (they move the computer through design §4), `exec` for `computer.exec` (a command in a running
 * computer; the state does not change). Keyed by the spec's enum, so a type added to the spec does
 * not compile until someone says here which it is.
 */
export const OPERATION_DRIVER_METHOD = {
  'computer.create': 'run',
  'computer.start': 'run',
  'computer.stop': 'run',
  'computer.restart': 'run',
  'computer.delete': 'run',
  'computer.exec': 'exec',
  'computer.recover': 'run',
  'computer.snapshot': 'snapshot',
} as const satisfies Readonly<Record<Schema<'OperationType'>, DriverMethod>>;

/**
 * The driver methods of operations: `run` (a lifecycle action), `exec` (a command), `snapshot` (the
 * computer's files copied into a snapshot by `snapshots.take`; the computer's state does not change).
 */
export type DriverMethod = 'run' | 'exec' | 'snapshot';

/**
 * The driver method of an operation type, or undefined for a type this server does not know.
 *
 * @example
 * driverMethodOf('computer.exec'); // 'exec'
 */
export function driverMethodOf(type: string): DriverMethod | undefined {
  return Object.hasOwn(OPERATION_DRIVER_METHOD, type)
    ? OPERATION_DRIVER_METHOD[type as keyof typeof OPERATION_DRIVER_METHOD]
    : undefined;
}

type RunOperationType = {
  [Type in keyof typeof OPERATION_DRIVER_METHOD]: (typeof OPERATION_DRIVER_METHOD)[Type] extends 'run'
    ? Type
    : never;
}[keyof typeof OPERATION_DRIVER_METHOD];

/**
 * What a driver's `run` is asked to do: the spec's `computer.*` lifecycle operation types without the
 * prefix, so a lifecycle type added to the spec is an action every driver and `COMPUTER_ACTIONS` must
 * handle. `create` provisions only; the worker then runs `start`. `computer.exec` is not one: the
 * worker hands it to `exec`.
 */
export type DriverAction = RunOperationType extends `computer.${infer Action}` ? Action : never;

export type { DriverComputer } from './computer.js';

/** A command to run in a running computer (`exec`). */
export interface ExecRequest {
  argv: string[];
  stdin?: Uint8Array;
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal;
  /**
   * Called as the command writes, with the bytes it wrote, in order, after the `maxOutputBytes` cap:
   * what it is handed for a stream, joined, is exactly that stream's bytes in the result. Must not
   * block: the worker buffers them for the command's output log (design §14). The callee may keep the
   * array, so a driver must not reuse it.
   */
  onOutput?: (stream: OutputStream, bytes: Uint8Array) => void;
}

/** A command's two outputs. */
export type OutputStream = 'stdout' | 'stderr';

/** What a command run in a computer returned. */
export interface ExecResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
}

export interface DriverContext {
  /** Aborted when this replica loses the operation (lease lost) or shuts down: stop promptly. */
  signal: AbortSignal;
  /** Reports progress of this action, 0–100 (the worker scales it into the operation's progress). */
  progress(percent: number): Promise<void>;
}

/**
 * A failure the driver reports: it becomes the operation's `error` (same shape as the API error
 * object, design §3) and leaves the computer `failed`.
 *
 * @example
 * throw new DriverError('internal', 'the hypervisor refused to start the machine', { host: 'h1' });
 */
export class DriverError extends Error {
  override name = 'DriverError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * What an action found, when the action itself decides where the computer ends: `recover` reports what
 * the engine has (a running container: `running`; one that does not run, or a new one: `stopped`).
 * Every other action answers nothing and ends where `COMPUTER_ACTIONS` says.
 */
export interface DriverOutcome {
  state: 'running' | 'stopped';
}

/**
 * What runs computers. The worker calls `run` once per action and may call it again for the same
 * action after a takeover (the replica that held the operation died), so actions must be safe to
 * repeat: "make it so", not "do it once".
 *
 * @example
 * const driver: ComputerDriver = new SimulatedDriver({ stepMs: 500 });
 * await driver.run('start', computer, { signal, progress: async () => {} });
 */
export interface ComputerDriver {
  readonly name: string;
  run(
    action: DriverAction,
    computer: DriverComputer,
    context: DriverContext,
    // biome-ignore lint/suspicious/noConfusingVoidType: every action but recover answers nothing
  ): Promise<DriverOutcome | void>;
  exec(computer: DriverComputer, request: ExecRequest): Promise<ExecResult>;
  /**
   * Files on the computer, with the same rules on every driver (both built-in drivers have them).
   * Optional so that a test's stand-in driver need not; without it the files API answers unavailable.
   */
  readonly files?: ComputerFiles;
  /**
   * Whether a computer made from the catalogue image `image` can run on this driver now (GET /images
   * shows it as `available`). Optional so that a test's stand-in driver need not; without it every
   * image is shown unavailable. `db`, when given, is where the catalogue is read (the caller's
   * transaction: on PGlite's one connection another query would wait for it).
   */
  imageAvailable?(image: string, db?: Queryable): Promise<boolean>;
  /**
   * Whether the driver knows that a computer of the catalogue image `image` cannot run here now: its
   * Engine answered that it lacks the image (not: did not answer). A create of it is refused at once.
   * Optional: without it, no image is refused before its create runs.
   */
  imageMissing?(image: string, db?: Queryable): Promise<boolean>;
  /**
   * Snapshots of computers' files (design §4.2; both built-in drivers have them). Optional like
   * `files`; without it a `computer.snapshot` operation fails `unavailable`.
   */
  readonly snapshots?: ComputerSnapshots;
  /**
   * Programs on a PTY in running computers (design §17; both built-in drivers have them). Optional
   * like `files`; without it opening a terminal answers unavailable.
   */
  readonly terminals?: TerminalDriver;
  /**
   * Long-lived helper programs with stdin and stdout attached in running computers (the desktop's
   * helper, design §18). Optional like `files`; without it the screen takes a command per request.
   */
  readonly processes?: ProcessDriver;
  /**
   * Whether every computer is placed on a host of the fleet when it is created (design §4.4): true
   * for the Docker driver, and for the simulated one with `SVC_SIM_FLEET=on`. Otherwise nothing is
   * placed, and a create costs no statement for it.
   */
  readonly fleet?: boolean;
}

/** The snapshot a driver writes or removes: its id and its workspace's (its image is named after both). */
export interface SnapshotTarget {
  id: string;
  workspace_id: string;
  /** The host whose Engine keeps its image (design §4.4); none without hosts. */
  host_id?: string | null;
}

/**
 * What keeps snapshots. `take` copies the computer's files (everything under `/home`, modes and
 * owners) into the snapshot's image, from a `running` or a `stopped` computer, leaving its state as
 * it was; like `run` it may be called again after a takeover, so it must be safe to repeat. A computer
 * whose `snapshot_id` is set is created (`run('create')`) from that snapshot's image. `remove` deletes
 * the image; one already gone is fine.
 */
export interface ComputerSnapshots {
  take(
    computer: DriverComputer,
    snapshot: SnapshotTarget,
    context: DriverContext,
  ): Promise<{ sizeBytes: number | null }>;
  remove(snapshot: SnapshotTarget, signal?: AbortSignal): Promise<void>;
}
