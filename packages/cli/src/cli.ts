import { execFileSync } from 'node:child_process';
import { exitCode } from './exit-codes.js';
import { run } from './program.js';

// A reader that goes away (`svc … | head -1`) ends the command quietly, as a closed pipe ends any
// Unix tool: no stack trace, and the status a shell shows for SIGPIPE (141, as `yes | head -1`).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(exitCode('closed_pipe'));
});

/** The settings `stty -g` printed before raw mode, restored after it. */
let saved: string | undefined;

/**
 * Raw mode as ssh has it (cfmakeraw): libuv's raw mode leaves output processing on, which turns a
 * program's bare LF (vim moving the cursor down) into CR LF; `stty -opost` turns it off too, and the
 * settings from before are put back as they were.
 */
function setRawMode(raw: boolean): void {
  const stty = (args: string[]) =>
    execFileSync('stty', args, { stdio: ['inherit', 'pipe', 'ignore'], encoding: 'utf8' }).trim();
  try {
    if (raw) saved = stty(['-g']);
    process.stdin.setRawMode?.(raw);
    if (raw) stty(['-opost']);
    else if (saved) stty([saved]);
  } catch {
    // No stty on PATH: libuv's raw mode alone.
  }
}

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  isTTY: process.stderr.isTTY === true,
  columns: process.stdout.isTTY ? process.stdout.columns : undefined,
  terminal: {
    isTTY: process.stdin.isTTY === true && process.stdout.isTTY === true,
    setRawMode,
    size: () =>
      process.stdout.columns && process.stdout.rows
        ? { cols: process.stdout.columns, rows: process.stdout.rows }
        : undefined,
    // Node turns SIGWINCH into stdout's 'resize' event.
    onResize: (listener) => {
      process.stdout.on('resize', listener);
      return () => process.stdout.off('resize', listener);
    },
  },
});
// A command may leave a read of stdin pending (`svc computers shell` when the remote program exits
// before stdin ends): that read would keep the process alive, so stdin is let go once run() is done.
process.stdin.destroy();
