import { run } from './program.js';

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  isTTY: process.stderr.isTTY === true,
  columns: process.stdout.isTTY ? process.stdout.columns : undefined,
});
