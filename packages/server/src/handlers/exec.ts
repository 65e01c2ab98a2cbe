import { loadDocument } from '@svc/contract';
import { workspaceAccess } from '../access.js';
import { ApiError, invalidArgument } from '../errors.js';
import { DriverError, type ExecResult } from '../operations/driver.js';
import { ComputerStateError, TRANSIENT_COMPUTER_STATES } from '../operations/records.js';
import { computerIn } from '../repositories/computers.js';
import type { Handler } from './types.js';

/** The request's defaults, read from the spec (the validator checks bodies but does not fill them in). */
const DEFAULTS = (() => {
  const schemas = loadDocument().components?.schemas as Record<
    string,
    { properties: Record<string, { default?: unknown }> }
  >;
  const fields = schemas.ExecComputerRequest?.properties ?? {};
  return {
    timeoutSeconds: Number(fields.timeout_seconds?.default),
    maxOutputBytes: Number(fields.max_output_bytes?.default),
  };
})();

/** How much longer than its timeout a driver may take to report a killed command before we give up. */
const KILL_GRACE_MS = 5_000;
/** `exit_code` of a command killed at its timeout, as `timeout(1)` reports it (the spec's Execution). */
const TIMED_OUT_EXIT_CODE = 124;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeStdin(
  stdin: string | undefined,
  encoding: 'utf-8' | 'base64' | undefined,
): Uint8Array | undefined {
  if (stdin === undefined) return undefined;
  if (encoding !== 'base64') return new TextEncoder().encode(stdin);
  if (!BASE64.test(stdin))
    throw invalidArgument([
      { field: 'stdin', description: 'is not valid base64 (stdin_encoding is base64)' },
    ]);
  return Buffer.from(stdin, 'base64');
}

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
 * Runs one command in a running computer through the driver and answers `200` with what it returned
 * (design §5). Needs the `exec` permission (design §8); 409 unless the computer is `running`. It
 * reads but never writes the database, so the app runs it outside a transaction (a command may take
 * 30 s). The request log gets one line naming the program (`argv[0]`), never stdin or output.
 */
export const execComputer: Handler<'execComputer'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'exec');
  await ctx.countMutation(workspace.id);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer);
  if (TRANSIENT_COMPUTER_STATES.has(computer.state) && computer.current_operation_id)
    throw new ComputerStateError(
      'operation_in_progress',
      `the computer is ${computer.state}; wait for its operation to finish`,
      { details: { operation_id: computer.current_operation_id } },
    );
  if (computer.state !== 'running')
    throw new ComputerStateError(
      'invalid_state',
      `computer ${computer.name} is ${computer.state}; exec is allowed from running`,
      { details: { current_state: computer.state, allowed_from: ['running'] } },
    );
  const { argv, stdin, stdin_encoding, timeout_seconds, max_output_bytes } = ctx.body;
  if (argv[0] === '') throw invalidArgument([{ field: 'argv[0]', description: 'must name a program' }]);
  const input = decodeStdin(stdin, stdin_encoding);
  const timeoutMs = (timeout_seconds ?? DEFAULTS.timeoutSeconds) * 1000;
  const started = performance.now();
  let result: ExecResult;
  try {
    result = await ctx.deps.driver.exec(computer, {
      argv,
      ...(input === undefined ? {} : { stdin: input }),
      timeoutMs,
      maxOutputBytes: max_output_bytes ?? DEFAULTS.maxOutputBytes,
      signal: AbortSignal.any([ctx.request.signal, AbortSignal.timeout(timeoutMs + KILL_GRACE_MS)]),
    });
  } catch (thrown) {
    if (thrown instanceof DriverError)
      throw new ApiError(thrown.code, thrown.message, { details: thrown.details, cause: thrown });
    throw thrown;
  }
  const durationMs = Math.round(performance.now() - started);
  const exitCode = result.timedOut ? TIMED_OUT_EXIT_CODE : result.exitCode;
  ctx.deps.audit('command run', {
    request_id: ctx.requestId,
    operation_id: ctx.operationId,
    principal_id: ctx.principal.id,
    workspace_id: workspace.id,
    computer_id: computer.id,
    program: argv[0],
    exit_code: exitCode,
    timed_out: result.timedOut,
    duration_ms: durationMs,
  });
  return {
    status: 200,
    body: {
      execution: {
        exit_code: exitCode,
        ...renderOutput(result),
        stdout_truncated: result.stdoutTruncated,
        stderr_truncated: result.stderrTruncated,
        timed_out: result.timedOut,
        duration_ms: durationMs,
      },
    },
  };
};

export const execHandlers = { execComputer };
