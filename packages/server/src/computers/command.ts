import type { Schema } from '@svc/contract';
import type { ExecResult } from './driver.js';

/** How much longer than its timeout a driver may take to report a killed command before we give up. */
export const KILL_GRACE_MS = 5_000;
/** `exit_code` of a command killed at its timeout, as `timeout(1)` reports it (the spec's Execution). */
const TIMED_OUT_EXIT_CODE = 124;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Text when both streams are UTF-8 without NUL (the spec's `encoding`), else both in base64. */
function renderOutput(result: ExecResult): { encoding: 'utf-8' | 'base64'; stdout: string; stderr: string } {
  try {
    const stdout = strictUtf8.decode(result.stdout);
    const stderr = strictUtf8.decode(result.stderr);
    if (!stdout.includes('\0') && !stderr.includes('\0')) return { encoding: 'utf-8', stdout, stderr };
  } catch {
    // not UTF-8: base64 below
  }
  return {
    encoding: 'base64',
    stdout: Buffer.from(result.stdout).toString('base64'),
    stderr: Buffer.from(result.stderr).toString('base64'),
  };
}

/**
 * What a driver's `exec` returned, in the spec's shape: `Execution` for `exec` and `LongExecution`
 * for the `result` of a `computer.exec` operation (the same fields; design §13).
 *
 * @example
 * const execution = toExecution(await driver.exec(computer, request), 42);
 */
export function toExecution(result: ExecResult, durationMs: number): Schema<'LongExecution'> {
  return {
    exit_code: result.timedOut ? TIMED_OUT_EXIT_CODE : result.exitCode,
    ...renderOutput(result),
    stdout_truncated: result.stdoutTruncated,
    stderr_truncated: result.stderrTruncated,
    timed_out: result.timedOut,
    duration_ms: durationMs,
  };
}
