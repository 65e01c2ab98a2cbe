// The handlers of a computer's terminals (design §17, `…/computers/{computer}/terminals`). The PTYs
// are the replica's `Terminals` (manager.ts); the rows and the output log are in the database, so any
// replica answers for any terminal.
import type { Schema } from '@svc/contract';
import { DriverError } from '../computers/driver.js';
import { computerIn } from '../computers/repositories/computers.js';
import { assertRunning } from '../computers/transitions.js';
import { BodyTooLargeError } from '../http/byte-body.js';
import type { WorkspaceAccess } from '../identity/access.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { TerminalQuotaError, type TerminalReader } from '../terminals/manager.js';
import { chunkBytes, chunkSize } from '../terminals/output.js';
import {
  countOpenTerminals,
  keptTerminalOutput,
  listTerminalRows,
  resizeTerminalRow,
  type TerminalRow,
  terminalById,
  terminalOf,
  terminalOutputAfter,
  terminalOutputBounds,
  touchTerminal,
} from '../terminals/repositories/terminals.js';
import { renderScreen } from '../terminals/screen.js';
import { API_PREFIX, permittedWorkspace, quotaExceeded } from './common.js';
import type { TerminalDeps } from './deps.js';
import { closesStream, followed, streamCursor } from './streams.js';
import type { Ctx, Handler } from './types.js';

/** The API's view of a terminal row. */
export function renderTerminal(row: TerminalRow): Schema<'Terminal'> {
  const time = (value: Date) => value.toISOString();
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    computer_id: row.computer_id,
    state: row.state,
    cols: row.cols,
    rows: row.rows,
    command: row.command,
    ...(row.cwd === null ? {} : { cwd: row.cwd }),
    created_by: row.created_by,
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
    ...(row.closed_at === null ? {} : { closed_at: time(row.closed_at) }),
    ...(row.exit_code === null ? {} : { exit_code: row.exit_code }),
    ...(row.end_reason === null ? {} : { end_reason: row.end_reason }),
  };
}

type InComputer = Ctx<
  | 'getComputerTerminal'
  | 'updateComputerTerminal'
  | 'deleteComputerTerminal'
  | 'streamComputerTerminalOutput'
  | 'sendComputerTerminalInput'
  | 'getComputerTerminalScreen',
  TerminalDeps
>;

/**
 * The workspace (permission checked, unless the caller did), the computer and the terminal the path
 * names; 404 for anything else.
 */
async function terminalIn(ctx: InComputer, checked?: WorkspaceAccess['workspace']) {
  const workspace = checked ?? (await permittedWorkspace(ctx)).workspace;
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer);
  const terminal = await terminalOf(ctx.db, computer.id, ctx.path.terminal);
  if (!terminal) throw new ApiError('not_found', `terminal ${ctx.path.terminal} not found`);
  return { workspace, computer, terminal };
}

/** 409 `invalid_state` for a terminal that has ended. */
function assertOpen(terminal: TerminalRow): void {
  if (terminal.state !== 'open')
    throw new ApiError('invalid_state', `terminal ${terminal.id} is ${terminal.state}`, {
      details: { current_state: terminal.state, allowed_from: ['open'] },
    });
}

export const listComputerTerminals: Handler<'listComputerTerminals', TerminalDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer);
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listComputerTerminals',
    workspace: workspace.id,
    computer: computer.id,
  });
  const rows = await listTerminalRows(ctx.db, {
    computerId: computer.id,
    after: page.after,
    limit: page.limit + 1,
  });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { terminals: items.map(renderTerminal), next_cursor, has_more } };
};

export const createComputerTerminal: Handler<'createComputerTerminal', TerminalDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const terminals = ctx.deps.terminals;
  if (!terminals.available)
    throw new ApiError('unavailable', `the ${ctx.deps.driver.name} driver has no terminals`);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer);
  assertRunning(computer, 'exec');
  const { cols, rows, command, cwd, env } = ctx.body;
  if (command?.[0] === '')
    throw invalidArgument([{ field: 'command[0]', description: 'must name a program' }]);
  const open = await countOpenTerminals(ctx.db, workspace.id, computer.id);
  const { perComputer, perWorkspace } = terminals.config;
  if (open.computer >= perComputer)
    throw quotaExceeded(
      'terminals_per_computer',
      perComputer,
      `computer ${computer.name} already has ${open.computer} open terminals`,
    );
  if (open.workspace >= perWorkspace)
    throw quotaExceeded(
      'terminals_per_workspace',
      perWorkspace,
      `workspace ${workspace.name} already has ${open.workspace} open terminals`,
    );
  let row: TerminalRow;
  try {
    row = await terminals.open(
      computer,
      {
        id: newId(),
        createdBy: ctx.principal.id,
        command,
        cwd,
        env: { TERM: 'xterm-256color', ...(env ?? {}) },
        cols,
        rows,
      },
      AbortSignal.any([ctx.request.signal, AbortSignal.timeout(30_000)]),
    );
  } catch (thrown) {
    if (thrown instanceof DriverError)
      throw new ApiError(thrown.code, thrown.message, { details: thrown.details, cause: thrown });
    if (thrown instanceof TerminalQuotaError)
      throw quotaExceeded(
        thrown.quota,
        thrown.limit,
        thrown.quota === 'terminals_per_computer'
          ? `computer ${computer.name} already has ${thrown.open} open terminals`
          : `workspace ${workspace.name} already has ${thrown.open} open terminals`,
      );
    throw thrown;
  }
  ctx.deps.audit('terminal opened', {
    request_id: ctx.requestId,
    principal_id: ctx.principal.id,
    workspace_id: workspace.id,
    computer_id: computer.id,
    terminal_id: row.id,
    program: row.command[0],
  });
  return {
    status: 201,
    body: { terminal: renderTerminal(row) },
    headers: {
      location: `${API_PREFIX}/workspaces/${workspace.id}/computers/${computer.id}/terminals/${row.id}`,
    },
  };
};

export const getComputerTerminal: Handler<'getComputerTerminal', TerminalDeps> = async (ctx) => {
  const { terminal } = await terminalIn(ctx);
  return { status: 200, body: { terminal: renderTerminal(terminal) } };
};

export const updateComputerTerminal: Handler<'updateComputerTerminal', TerminalDeps> = async (ctx) => {
  const { terminal } = await terminalIn(ctx);
  assertOpen(terminal);
  const { cols, rows } = ctx.body;
  const updated = await resizeTerminalRow(ctx.db, terminal.id, cols, rows);
  if (!updated) assertOpen({ ...terminal, state: 'closed' });
  await ctx.deps.terminals.resize(ctx.db, terminal, cols, rows);
  return { status: 200, body: { terminal: renderTerminal(updated as TerminalRow) } };
};

export const deleteComputerTerminal: Handler<'deleteComputerTerminal', TerminalDeps> = async (ctx) => {
  const { workspace, computer, terminal } = await terminalIn(ctx);
  if (terminal.state === 'open') {
    await ctx.deps.terminals.close(terminal, 'closed');
    ctx.deps.audit('terminal close requested', {
      request_id: ctx.requestId,
      principal_id: ctx.principal.id,
      workspace_id: workspace.id,
      computer_id: computer.id,
      terminal_id: terminal.id,
    });
  }
  return { status: 204, body: undefined };
};

export const sendComputerTerminalInput: Handler<'sendComputerTerminalInput', TerminalDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const terminals = ctx.deps.terminals;
  // A terminal this replica holds, named by its computer's id, needs no read of the database: a
  // keystroke's whole cost is its echo. Anything else is looked up (and 404 or 409 as it should be).
  const held = terminals.held(ctx.path.terminal, workspace.id, ctx.path.computer);
  const terminal = held ? undefined : (await terminalIn(ctx, workspace)).terminal;
  if (terminal) assertOpen(terminal);
  const body = ctx.body;
  const limit = body.limitBytes;
  const tooLarge = () =>
    new ApiError('payload_too_large', `a terminal takes at most ${limit} bytes of input per request`, {
      details: { limit_bytes: limit },
    });
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await new Response(body.stream).arrayBuffer());
  } catch (thrown) {
    if (thrown instanceof BodyTooLargeError || body.overLimit) throw tooLarge();
    throw thrown;
  }
  if (body.overLimit) throw tooLarge();
  const wait = terminals.admitInput(ctx.path.terminal, bytes.length);
  if (wait > 0)
    throw new ApiError(
      'rate_limited',
      `terminal input is limited to ${terminals.config.inputBytesPerSecond} bytes a second`,
      {
        details: { policy: 'terminal-input', retry_after_seconds: wait },
        headers: { 'retry-after': String(wait) },
      },
    );
  if (held) await terminals.inputHeld(ctx.db, held, bytes);
  else await terminals.input(ctx.db, terminal as TerminalRow, bytes);
  return { status: 204, body: undefined };
};

export const getComputerTerminalScreen: Handler<'getComputerTerminalScreen', TerminalDeps> = async (ctx) => {
  const { terminal } = await terminalIn(ctx);
  const output = await keptTerminalOutput(ctx.db, terminal.id);
  const screen = await renderScreen(output.map(chunkBytes), terminal.cols, terminal.rows);
  if (terminal.state === 'open') await touchTerminal(ctx.db, terminal.id);
  return { status: 200, body: { screen } };
};

export const streamComputerTerminalOutput: Handler<'streamComputerTerminalOutput', TerminalDeps> = async (
  ctx,
) => {
  const { workspace, terminal } = await terminalIn(ctx);
  const cursor = streamCursor(ctx.request, ctx.query.after);
  const { first, last } = await terminalOutputBounds(ctx.db, terminal.id);
  // Without a cursor the stream starts at the oldest event kept; a cursor before it missed dropped output.
  const endAtOnce = cursor !== undefined && first > 0 && cursor < first - 1 ? 'cursor_expired' : undefined;
  if (terminal.state === 'open') await touchTerminal(ctx.db, terminal.id);
  let touched = Date.now();
  // Without a cursor the reader asked for what is kept, whatever was dropped before its first read.
  let fromOldest = cursor === undefined;
  // This reader's pace, for the program's back-pressure: registered at its first read, where it is
  // once each event is written, gone when the stream ends.
  let reader: TerminalReader | undefined;
  // A cursor past the log's last event names events the holder handed its readers from memory before
  // their append committed: they come (the holder goes on), or, should the holder have ended first,
  // never do, and the stream ends at once when the terminal is closed.
  let ahead = cursor !== undefined && cursor > last;
  return followed(ctx, workspace.id, {
    wakeups: ctx.deps.terminals.output,
    key: terminal.id,
    after: cursor ?? Math.max(0, first - 1),
    endAtOnce,
    read: async (after) => {
      reader ??= ctx.deps.terminals.reading(terminal.id);
      // What this replica cut itself is read from memory while it holds the terminal.
      const records =
        ctx.deps.terminals.recentAfter(terminal.id, after, 200) ??
        (await terminalOutputAfter(ctx.db, terminal.id, after, 200));
      const takesOldest = fromOldest;
      if (records.length > 0) {
        fromOldest = false;
        ahead = false;
      } else if (ahead && (await terminalById(ctx.db, terminal.id))?.state !== 'open') {
        return { events: [], last: after, final: false, more: false, expired: true };
      }
      // A reader is use: the terminal is not idle while someone reads it.
      if (Date.now() - touched > 10_000) {
        touched = Date.now();
        await touchTerminal(ctx.db, terminal.id);
      }
      return {
        events: records.map((record) => ({
          event: record.event,
          id: String(record.sequence),
          data: record.data,
        })),
        last: Number(records.at(-1)?.sequence ?? after),
        final: records.some((record) => closesStream('streamComputerTerminalOutput', record.event)),
        more: records.length === 200,
        // The log keeps the last SVC_TERMINAL_KEEP_BYTES: a reader further behind lost what was dropped.
        expired: !takesOldest && records.length > 0 && Number(records[0]?.sequence) > after + 1,
      };
    },
    sending: () => reader?.sending(),
    sent: (event) => {
      const chunk = event.event === 'output' ? (event.data as Schema<'TerminalOutputChunk'>) : undefined;
      // An event that is no output moves it nowhere, but its client took it.
      reader?.at(chunk ? chunk.offset + chunkSize(chunk) : -1);
    },
    closed: () => reader?.close(),
  });
};

/** The handlers of `…/computers/{computer}/terminals`. */
export const terminalHandlers = {
  listComputerTerminals,
  createComputerTerminal,
  getComputerTerminal,
  updateComputerTerminal,
  deleteComputerTerminal,
  streamComputerTerminalOutput,
  sendComputerTerminalInput,
  getComputerTerminalScreen,
};
