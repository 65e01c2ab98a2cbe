import { exitCode } from './exit-codes.js';
import { run } from './program.js';

// A reader that goes away (`svc … | head -1`) ends the command quietly, as a closed pipe ends any
// Unix tool: no stack trace, and the status a shell shows for SIGPIPE (141, as `yes | head -1`).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(exitCode('closed_pipe'));
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  isTTY: process.stderr.isTTY === true,
  columns: process.stdout.isTTY ? process.stdout.columns : undefined,
});
