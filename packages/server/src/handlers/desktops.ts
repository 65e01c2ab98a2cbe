import type { Schema } from '@svc/contract';
import { DriverError } from '../computers/driver.js';
import { computerIn } from '../computers/repositories/computers.js';
import { touchComputerActivity } from '../computers/repositories/lifetimes.js';
import { assertRunning } from '../computers/transitions.js';
import { checkActions } from '../desktops/actions.js';
import type { DesktopComputer, Screenshot } from '../desktops/desktop.js';
import type { Desktops } from '../desktops/desktops.js';
import type { PerSecond } from '../desktops/rate.js';
import { screenOf } from '../desktops/repositories/screens.js';
import { outgoingBytes } from '../http/byte-body.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { Wakeups } from '../streams/wakeups.js';
import { permittedWorkspace } from './common.js';
import type { DesktopDeps } from './deps.js';
import { followed, streamCursor } from './streams.js';
import type { Ctx, Handler } from './types.js';

// Screens and input (design §18): `GET …/screen` and `POST …/input` on a running computer whose image
// has a display. What runs inside the computer is the desktop's (engine.ts, simulated.ts); the rules
// (who, which computer, which state, the bounds) are here, the same on every driver.

type ScreenOperation = 'downloadComputerScreen' | 'inputComputer' | 'streamComputerScreenFrames';

/**
 * Everything checked before the screen is touched, in order: the caller's role (404 for a non-member,
 * 403 below the operation's permission), the computer (404), a display (409 `no_display`), its state
 * (409 `operation_in_progress`, 409 `invalid_state` unless running), the rate (429).
 */
async function reachScreen<K extends ScreenOperation>(
  ctx: Ctx<K, DesktopDeps>,
  rate?: (d: Desktops) => PerSecond,
): Promise<{ workspace: { id: string }; computer: DesktopComputer; desktops: Desktops }> {
  const { workspace } = await permittedWorkspace(ctx as unknown as Parameters<typeof permittedWorkspace>[0]);
  const computer = await computerIn(ctx.db, workspace.id, (ctx.path as { computer: string }).computer);
  const screen = await screenOf(ctx.db, computer);
  if (computer.state !== 'running' && !computer.current_operation_id)
    throw new ApiError(
      'invalid_state',
      `computer ${computer.name} is ${computer.state}; its screen can be reached while it is running`,
      { details: { current_state: computer.state, allowed_from: ['running'] } },
    );
  assertRunning(computer, 'exec');
  const { desktops } = ctx.deps;
  rate?.(desktops).take(computer.id);
  return { workspace, computer: { ...computer, screen }, desktops };
}

/** A driver's failure as the API's error (the Engine went away: 503, retry). */
function asApiError(thrown: unknown): unknown {
  if (!(thrown instanceof DriverError)) return thrown;
  return new ApiError(thrown.code, thrown.message, {
    cause: thrown,
    ...(thrown.code === 'unavailable' ? { headers: { 'retry-after': '1' } } : {}),
  });
}

/** The picture's bounds a request asks for (`max_width`, `max_height`). */
function scaleOf(query: { max_width?: number; max_height?: number }) {
  return {
    ...(query.max_width === undefined ? {} : { maxWidth: query.max_width }),
    ...(query.max_height === undefined ? {} : { maxHeight: query.max_height }),
  };
}

/**
 * `GET …/screen?max_width=&max_height=`: the screen as a PNG, its size and the pointer in headers.
 * Looking is not activity: a computer watched but not used still reaches its idle timeout.
 */
export const downloadComputerScreen: Handler<'downloadComputerScreen', DesktopDeps> = async (ctx) => {
  const { computer, desktops } = await reachScreen(ctx, (d) => d.screens);
  const scale = scaleOf(ctx.query);
  const shot = await desktops.desktop.screenshot(computer, scale, ctx.request.signal).catch((thrown) => {
    throw asApiError(thrown);
  });
  const png = shot.png;
  return {
    status: 200,
    body: outgoingBytes(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(png);
          controller.close();
        },
      }),
      'image/png',
      png.byteLength,
    ),
    headers: {
      'screen-width': String(shot.screen.width),
      'screen-height': String(shot.screen.height),
      'cursor-x': String(shot.cursor.x),
      'cursor-y': String(shot.cursor.y),
      'cache-control': 'no-store',
    },
  };
};

/**
 * `POST …/input`: the actions applied in order, up to the first that fails; answers where the pointer
 * is. One line of the audit log per request: the actions' types and count, never the text typed.
 */
export const inputComputer: Handler<'inputComputer', DesktopDeps> = async (ctx) => {
  const { workspace, computer, desktops } = await reachScreen(ctx, (d) => d.inputs);
  const { actions } = ctx.body;
  const violations = checkActions(actions, computer.screen);
  if (violations.length > 0) throw invalidArgument(violations, 'the input actions are not valid');
  // Input is activity (design §4.1), as a command is.
  await touchComputerActivity(ctx.db, computer.id, ctx.deps.lifetimeNow());
  const started = performance.now();
  const outcome = await desktops.desktop.input(computer, actions, ctx.request.signal).catch((thrown) => {
    throw asApiError(thrown);
  });
  ctx.deps.audit('input sent', {
    request_id: ctx.requestId,
    operation_id: ctx.operationId,
    principal_id: ctx.principal.id,
    workspace_id: workspace.id,
    computer_id: computer.id,
    actions: actions.length,
    types: [...new Set(actions.map((a) => a.type))].join(','),
    applied: outcome.applied,
    failed_index: outcome.failed?.index,
    duration_ms: Math.round(performance.now() - started),
  });
  return {
    status: 200,
    body: {
      input: {
        applied: outcome.applied,
        cursor: outcome.cursor,
        ...(outcome.failed ? { failed: outcome.failed } : {}),
        ...(outcome.simulated ? { simulated: true } : {}),
      },
    },
  };
};

/** How often a live screen is looked at: at most this many frames a second are sent (the spec says 4). */
const FRAME_MS = 250;
/** How often a live screen checks that its computer still runs (the simulated screen never fails). */
const STATE_CHECK_MS = 2_000;

/**
 * `GET …/screen/frames`: the screen live, as Server-Sent Events. The stream is woken every
 * {@link FRAME_MS}; each wake-up takes a screenshot (on the Docker driver, through the computer's
 * helper: a picture whose pixels did not change costs no PNG encoding) and sends a `frame` when the
 * picture or the pointer differ from the last one sent. Frames are not kept: the cursor only numbers
 * them. A screen that cannot be taken for a moment sends nothing; a computer that stopped ends it.
 */
export const streamComputerScreenFrames: Handler<'streamComputerScreenFrames', DesktopDeps> = async (ctx) => {
  const { workspace, computer, desktops } = await reachScreen(ctx);
  const after = streamCursor(ctx.request, ctx.query.after) ?? 0;
  const scale = scaleOf(ctx.query);
  let last: { png: Uint8Array; x: number; y: number } | undefined;
  let checked = performance.now();
  const nothing = (at: number, final = false) => ({ events: [], last: at, final, more: false });
  return followed(ctx, workspace.id, {
    wakeups: new Wakeups(),
    key: computer.id,
    after,
    tickMs: FRAME_MS,
    read: async (cursor) => {
      if (performance.now() - checked > STATE_CHECK_MS) {
        checked = performance.now();
        const now = await computerIn(ctx.db, workspace.id, computer.id).catch(() => undefined);
        if (now?.state !== 'running' && !now?.current_operation_id) return nothing(cursor, true);
      }
      let shot: Screenshot;
      const takenAt = new Date().toISOString();
      try {
        shot = await desktops.desktop.screenshot(computer, scale, ctx.request.signal);
      } catch (thrown) {
        if (thrown instanceof DriverError && thrown.code === 'invalid_state') return nothing(cursor, true);
        return nothing(cursor); // the screen may be back at the next look
      }
      if (
        last &&
        last.x === shot.cursor.x &&
        last.y === shot.cursor.y &&
        Buffer.from(last.png).equals(Buffer.from(shot.png))
      )
        return nothing(cursor);
      last = { png: shot.png, ...shot.cursor };
      const picture = pngSize(shot.png);
      const frame: Schema<'ScreenFrame'> = {
        png: Buffer.from(shot.png).toString('base64'),
        width: picture.width,
        height: picture.height,
        screen: shot.screen,
        cursor: shot.cursor,
        taken_at: takenAt,
      };
      return {
        events: [{ event: 'frame', id: String(cursor + 1), data: frame }],
        last: cursor + 1,
        final: false,
        more: false,
      };
    },
  });
};

/** A PNG's size, from its header. */
function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** The handlers of design §18, registered with the app's others (compose/handlers.ts). */
export const desktopHandlers = { downloadComputerScreen, inputComputer, streamComputerScreenFrames };
