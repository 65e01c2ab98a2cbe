// The seam for a long-lived helper program in a running computer (`ComputerDriver.processes`): started
// once, its stdin and stdout kept open, so that what it is asked later skips starting a process. The
// Docker driver's is one Engine exec left attached (docker.ts); the simulated driver has none.
import type { DriverComputer } from '../computer.js';

/** What to start: the program and its arguments, run as the computer's user. */
export interface ProcessRequest {
  argv: string[];
  /** Aborts the start only; a started process is ended with `kill`. */
  signal: AbortSignal;
}

/**
 * A program running in a computer with its stdin and stdout attached (no TTY: bytes pass exact).
 * `onStdout`/`onStderr` hear what it writes, in order; `onExit` once, when its streams are gone. Every
 * method may be called after the end, and does nothing then.
 */
export interface AttachedProcess {
  write(bytes: Uint8Array | string): void;
  onStdout(listener: (bytes: Buffer) => void): void;
  onStderr(listener: (bytes: Buffer) => void): void;
  onExit(listener: () => void): void;
  /** Whether its streams are still open. */
  readonly alive: boolean;
  /** Ends it: closes its streams (it reads the end of its stdin) and kills what it started. */
  kill(): void;
}

/** What a driver offers for attached processes. */
export interface ProcessDriver {
  /** Starts the program; rejects with a `DriverError` when the computer cannot run one now. */
  start(computer: DriverComputer, request: ProcessRequest): Promise<AttachedProcess>;
}
