// Runs the repository's spec lint command as a child process and prints what it prints. Each save starts
// a new run; a run still going for an older save is stopped first, with its whole process group (the
// command is a shell line such as `pnpm --silent run lint`, which starts linters of its own).
import { spawn } from 'node:child_process';

/**
 * @typedef {object} LintRun
 * @property {Promise<{ code: number | null, output: string, cancelled: boolean }>} done
 * @property {() => void} cancel stops the run and its children
 */

/**
 * Starts `command` (a shell line) in `cwd`, streaming each output line to `onLine`.
 *
 * @param {{ command: string, cwd: string, onLine: (line: string) => void }} options
 * @returns {LintRun}
 */
export function runLint({ command, cwd, onLine }) {
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
  const done = new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n`, cancelled }));
    child.on('close', (code) => {
      if (pending) onLine(pending);
      resolve({ code, output, cancelled });
    });
  });
  return {
    done,
    cancel() {
      if (child.exitCode !== null || child.pid === undefined) return;
      cancelled = true;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone between the check and the signal.
      }
    },
  };
}
