// Runs the repository's spec lint command as a child process and prints what it prints. Each save starts
// a new run; a run still going for an older save is stopped first, with its whole process group (the
// command is a shell line such as `pnpm --silent run lint`, which starts linters of its own). A run that
// takes longer than `timeoutMs` (a linter that hangs) is stopped the same way and reported.
import { spawn } from 'node:child_process';

/** A lint run that takes longer than this is stopped: nothing in the loop waits forever. */
export const LINT_TIMEOUT_MS = 5 * 60_000;

/**
 * @typedef {object} LintRun
 * @property {Promise<{ code: number | null, output: string, cancelled: boolean }>} done never rejects
 * @property {() => void} cancel stops the run and its children
 */

/**
 * Starts `command` (a shell line) in `cwd`, streaming each output line to `onLine`.
 *
 * @param {{ command: string, cwd: string, onLine: (line: string) => void, timeoutMs?: number }} options
 * @returns {LintRun}
 * @example
 * const run = runLint({ command: 'pnpm --silent run lint', cwd: 'spec', onLine: console.log });
 * const { code } = await run.done;
 */
export function runLint({ command, cwd, onLine, timeoutMs = LINT_TIMEOUT_MS }) {
  const child = spawn(command, {
    cwd,
    shell: true,
    // Its own process group, so that cancel() reaches the linters the command starts.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  let output = '';
  let cancelled = false;
  let pending = '';
  const read = (chunk) => {
    output += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  // A pipe that fails ends the run through 'close'; it must not throw out of the loop.
  child.stdout.on('error', () => {});
  child.stderr.on('error', () => {});
  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return false;
    try {
      process.kill(-child.pid, 'SIGTERM');
      return true;
    } catch {
      return false; // Already gone between the check and the signal.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = stop();
  }, timeoutMs);
  timer.unref();
  const done = new Promise((resolve) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: 1, output: `${output}${error.message}\n`, cancelled });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (pending) onLine(pending);
      if (timedOut) {
        const line = `lint: stopped after ${Math.round(timeoutMs / 1000)} s`;
        onLine(line);
        output += `${line}\n`;
      }
      resolve({ code: timedOut ? 1 : code, output, cancelled });
    });
  });
  return {
    done,
    cancel() {
      if (stop()) cancelled = true;
    },
  };
}
