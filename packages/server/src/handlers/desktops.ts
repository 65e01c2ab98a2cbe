import { DriverError } from '../computers/driver.js';
import { computerIn } from '../computers/repositories/computers.js';
import { touchComputerActivity } from '../computers/repositories/lifetimes.js';
import { RATES } from '../computers/screen-limits.js';
import { assertRunning } from '../computers/transitions.js';
import { checkActions } from '../desktops/actions.js';
import type { Desktop, DesktopComputer } from '../desktops/desktop.js';
import { EngineDesktop } from '../desktops/engine.js';
import { PerSecond } from '../desktops/rate.js';
import { screenOf } from '../desktops/repositories/screens.js';
import { SimulatedDesktop } from '../desktops/simulated.js';
import { outgoingBytes } from '../http/byte-body.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { permittedWorkspace } from './common.js';
import type { AppDeps, Ctx, Handler } from './types.js';

// Screens and input (design §18): `GET …/screen` and `POST …/input` on a running computer whose image
// has a display. What runs inside the computer is the desktop's (engine.ts, simulated.ts); the rules
// (who, which computer, which state, the bounds) are here, the same on every driver.

/** What one app's screens share: its desktop and the per-computer rates. */
interface Desktops {
  desktop: Desktop;
  screens: PerSecond;
  inputs: PerSecond;
}

const perApp = new WeakMap<AppDeps, Desktops>();

/** The desktop of the app's driver: the simulated one's, or commands in the computer for a real one. */
function desktopsOf(deps: AppDeps): Desktops {
  let desktops = perApp.get(deps);
  if (!desktops) {
    desktops = {
      desktop: deps.driver.name === 'simulated' ? new SimulatedDesktop() : new EngineDesktop(deps.driver),
      screens: new PerSecond('computer-screen', RATES.screen),
      inputs: new PerSecond('computer-input', RATES.input),
    };
    perApp.set(deps, desktops);
  }
  return desktops;
}

type ScreenOperation = 'downloadComputerScreen' | 'inputComputer';

/**
 * Everything checked before the screen is touched, in order: the caller's role (404 for a non-member,
 * 403 below the operation's permission), the computer (404), a display (409 `no_display`), its state
 * (409 `operation_in_progress`, 409 `invalid_state` unless running), the rate (429).
 */
async function reachScreen<K extends ScreenOperation>(
  ctx: Ctx<K>,
  rate: (d: Desktops) => PerSecond,
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
  const desktops = desktopsOf(ctx.deps);
  rate(desktops).take(computer.id);
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

/**
 * `GET …/screen?max_width=&max_height=`: the screen as a PNG, its size and the pointer in headers.
 * Looking is not activity: a computer watched but not used still reaches its idle timeout.
 */
export const downloadComputerScreen: Handler<'downloadComputerScreen'> = async (ctx) => {
  const { computer, desktops } = await reachScreen(ctx, (d) => d.screens);
  const scale = {
    ...(ctx.query.max_width === undefined ? {} : { maxWidth: ctx.query.max_width }),
    ...(ctx.query.max_height === undefined ? {} : { maxHeight: ctx.query.max_height }),
  };
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
export const inputComputer: Handler<'inputComputer'> = async (ctx) => {
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

/** The handlers of design §18, registered with the app's others (compose/handlers.ts). */
export const desktopHandlers = { downloadComputerScreen, inputComputer };
