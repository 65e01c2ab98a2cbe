// The seam between terminals and what runs computers: a driver that can open a program on a PTY in
// a running computer (`ComputerDriver.terminals`). The simulated driver's is a line discipline over a
// tiny shell (simulated.ts); the Docker driver's is the Engine's exec with a TTY (docker.ts).
import type { DriverComputer } from '../computer.js';

/** What to start on a PTY. */
export interface PtyRequest {
  /** The program and its arguments; undefined: the login shell of the computer's user. */
  command: string[] | undefined;
  cwd: string | undefined;
  env: Record<string, string>;
  cols: number;
  rows: number;
  signal: AbortSignal;
}

/**
 * A program running on a PTY. `onData` hears what it writes, in order; `onExit` once, when it has
 * ended (the exit code when known). Every method may be called after the end, and does nothing then.
 */
export interface Pty {
  /** The command that runs, as started (the login shell resolved). */
  readonly command: string[];
  write(bytes: Uint8Array): void;
  resize(cols: number, rows: number): void;
  /** Hangs the program up (SIGHUP), and kills it if it is still there after a grace period. */
  hangup(): void;
  /**
   * Stops taking what the program writes until {@link resume}: the PTY's buffer fills and the program
   * blocks on its next write, as it would behind a slow terminal (back-pressure for slow readers).
   */
  pause(): void;
  /** Takes what the program writes again (what waited comes first). */
  resume(): void;
  onData(listener: (bytes: Uint8Array) => void): void;
  onExit(listener: (exitCode: number | undefined) => void): void;
}

/** What a driver offers for terminals. */
export interface TerminalDriver {
  /** Starts the program; rejects with a `DriverError` when the computer cannot run one now. */
  open(computer: DriverComputer, request: PtyRequest): Promise<Pty>;
}

/** Calls each listener with the same value, each in its own try (one that throws stops no other). */
export class Listeners<T> {
  readonly #all: ((value: T) => void)[] = [];
  add(listener: (value: T) => void): void {
    this.#all.push(listener);
  }
  emit(value: T): void {
    for (const listener of this.#all) {
      try {
        listener(value);
      } catch {
        // a listener's fault is its own
      }
    }
  }
}
