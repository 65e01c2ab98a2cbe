import { loadDocument, type Schema } from '@svc/contract';
import { KILL_GRACE_MS, toExecution } from '../computers/command.js';
import { waitForComputerState } from '../computers/computer-waits.js';
import { DriverError, type ExecResult } from '../computers/driver.js';
import { requestComputerCommand } from '../computers/records.js';
import { renderOperation } from '../computers/render.js';
import { type ComputerView, computerIn } from '../computers/repositories/computers.js';
import { touchComputerActivity } from '../computers/repositories/lifetimes.js';
import type { ComputerState } from '../computers/states.js';
import { assertRunning } from '../computers/transitions.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { permittedWorkspace } from './common.js';
import { accepted } from './computers.js';
import type { ExecDeps } from './deps.js';
import { MAX_WAIT_SECONDS } from './operations.js';
import type { Ctx, Handler } from './types.js';

/** The request's defaults, read from the spec (the validator checks bodies but does not fill them in). */
const DEFAULTS = (() => {
  const schemas = loadDocument().components?.schemas as Record<
    string,
    { properties: Record<string, { default?: unknown }> }
  >;
  const fields = schemas.ExecComputerRequest?.properties ?? {};
  const run = schemas.RunComputerRequest?.properties ?? {};
  return {
    timeoutSeconds: Number(fields.timeout_seconds?.default),
    runTimeoutSeconds: Number(run.timeout_seconds?.default),
    maxOutputBytes: Number(fields.max_output_bytes?.default),
  };
})();

/** The states an exec's `wait` holds through: each ends in `running` when all goes well (design §13). */
const ON_THE_WAY: ReadonlySet<ComputerState> = new Set(['creating', 'starting', 'restarting', 'recovering']);

/** Whether an exec with `wait` would still hold for `computer`: on its way to running, or running under an operation. */
const onTheWay = (computer: Pick<ComputerView, 'state' | 'current_operation_id'>) =>
  ON_THE_WAY.has(computer.state) || (computer.state === 'running' && computer.current_operation_id !== null);

/**
 * The computer the command is for: with `?wait=N`, once it is no longer on its way to `running` or N
 * seconds have passed, whichever is first (`assertRunning` then answers the 409 a call without `wait`
 * gets). Woken by the computer's change notification, never by polling; each read borrows a connection
 * for its statement only; a client that goes away ends the wait. A wait that holds takes a slot of the
 * principal's `computer-waits`, as `GET …/computers/{computer}?wait_for=` does.
 */
async function computerToRun(ctx: Ctx<'execComputer', ExecDeps>, workspaceId: string): Promise<ComputerView> {
  const read = () => computerIn(ctx.db, workspaceId, ctx.path.computer);
  const waitMs = Math.min(ctx.query.wait ?? 0, MAX_WAIT_SECONDS) * 1000;
  if (waitMs === 0) return read();
  const { computer } = await waitForComputerState(
    read,
    ctx.deps.computerChanges,
    workspaceId,
    (seen) => !onTheWay(seen),
    waitMs,
    { signal: ctx.request.signal, hold: () => ctx.deps.computerWaits.take(ctx.principal.id) },
  );
  return computer;
}

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

/**
 * Runs one command in a running computer through the driver and answers `200` with what it returned
 * (design §5). Needs the `exec` permission (design §8); 409 unless the computer is `running` (with
 * `?wait=N`, once it is: see {@link computerToRun}). It
 * reads but never writes the database, so the app runs it outside a transaction (a command may take
 * 30 s). The request log gets one line naming the program (`argv[0]`), never stdin or output.
 */
export const execComputer: Handler<'execComputer', ExecDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const { argv, stdin, stdin_encoding, timeout_seconds, max_output_bytes } = ctx.body;
  if (argv[0] === '') throw invalidArgument([{ field: 'argv[0]', description: 'must name a program' }]);
  const input = decodeStdin(stdin, stdin_encoding);
  const computer = await computerToRun(ctx, workspace.id);
  assertRunning(computer, 'exec');
  const timeoutMs = (timeout_seconds ?? DEFAULTS.timeoutSeconds) * 1000;
  const started = performance.now();
  // A command is activity (design §4.1), when it starts and when it ends.
  await touchComputerActivity(ctx.db, computer.id, ctx.deps.lifetimeNow());
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
      throw new ApiError(thrown.code, thrown.message, {
        details: thrown.details,
        cause: thrown,
        ...(thrown.code === 'unavailable' ? { headers: { 'retry-after': '1' } } : {}),
      });
    throw thrown;
  }
  const execution = toExecution(result, Math.round(performance.now() - started));
  await touchComputerActivity(ctx.db, computer.id, ctx.deps.lifetimeNow());
  ctx.deps.audit('command run', {
    request_id: ctx.requestId,
    operation_id: ctx.operationId,
    principal_id: ctx.principal.id,
    workspace_id: workspace.id,
    computer_id: computer.id,
    program: argv[0],
    exit_code: execution.exit_code,
    timed_out: execution.timed_out,
    duration_ms: execution.duration_ms,
  });
  return { status: 200, body: { execution: execution as Schema<'Execution'> } };
};

/**
 * The long form (design §13): records a pending `computer.exec` operation and answers `202`; the
 * worker runs the command through the driver and stores what it returned on the operation. Same
 * permission, state rules and validation as `execComputer`; the request log names `argv[0]` here, and
 * the worker's audit line names it again when the command has run.
 */
export const runComputer: Handler<'runComputer', ExecDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer);
  const { argv, stdin, stdin_encoding, timeout_seconds, max_output_bytes } = ctx.body;
  if (argv[0] === '') throw invalidArgument([{ field: 'argv[0]', description: 'must name a program' }]);
  const input = decodeStdin(stdin, stdin_encoding);
  const operation = await requestComputerCommand(
    ctx.db,
    computer.id,
    {
      argv,
      ...(input === undefined ? {} : { stdin_base64: Buffer.from(input).toString('base64') }),
      timeout_ms: (timeout_seconds ?? DEFAULTS.runTimeoutSeconds) * 1000,
      max_output_bytes: max_output_bytes ?? DEFAULTS.maxOutputBytes,
    },
    ctx.principal.id,
  );
  // After the row lock requestComputerCommand took: the touch is this transaction's own write.
  await touchComputerActivity(ctx.db, computer.id, ctx.deps.lifetimeNow());
  ctx.deps.audit('command requested', {
    request_id: ctx.requestId,
    operation_id: ctx.operationId,
    operation: operation.id,
    principal_id: ctx.principal.id,
    workspace_id: workspace.id,
    computer_id: computer.id,
    program: argv[0],
  });
  return {
    status: 202,
    body: { operations: [renderOperation(operation, { result: true })] },
    headers: accepted([operation]),
  };
};

export const execHandlers = { execComputer, runComputer };
