import { promisify } from 'node:util';
import { inflate } from 'node:zlib';
import type { ComputerDriver } from '../computers/driver.js';
import { DriverError } from '../computers/driver.js';
import { SCREEN_BOUNDS } from '../computers/screen-limits.js';
import { helperSteps, type InputAction, xdotoolArgs } from './actions.js';
import {
  type Cursor,
  type Desktop,
  type DesktopComputer,
  type InputOutcome,
  type Screenshot,
  scaledSize,
} from './desktop.js';
import { DesktopHelper } from './helper.js';
import { pngOfRows, rgbRows } from './pixels.js';

/** The most bytes a screenshot may have (a 3840×2160 picture of noise is about 25 MB as a PNG). */
const MAX_PNG_BYTES = 64 * 1024 * 1024;
/** How long a screenshot may take inside the computer. */
const SCREENSHOT_TIMEOUT_MS = 10_000;
/** How long input may take beyond its waits and typing. */
const INPUT_SLACK_MS = 10_000;

/**
 * A screenshot inside the computer, in one command: the screen's size and the pointer to stderr
 * (xdotool, at the same time), the picture to stdout as a PNG (ImageMagick's `import`; its arguments, an optional
 * `-resize`). Low zlib effort: a screenshot is sent at once and thrown away, so speed beats size.
 */
const SCREENSHOT_SCRIPT = [
  // Side by side: the size and the pointer are asked while the picture is taken.
  'xdotool getdisplaygeometry getmouselocation --shell >&2 &',
  'import -silent -window root "$@" -define png:compression-level=1 -define png:compression-filter=1 png:-',
  'taken=$?',
  'wait $! || exit 3',
  'exit $taken',
].join('\n');

/**
 * Input inside the computer, in one command: each action is its argument count then its xdotool
 * arguments; they run in order, and the first that fails (a non-zero exit, or a complaint on stderr,
 * as xdotool only warns of an unknown key) ends the run. Then the pointer's place.
 */
const INPUT_SCRIPT = `i=0
while [ "$#" -gt 0 ]; do
  n=$1; shift
  if [ "$n" -gt 0 ]; then
    err=$(xdotool "\${@:1:$n}" 2>&1 >/dev/null); code=$?
    shift "$n"
    if [ "$code" -ne 0 ] || [ -n "$err" ]; then
      printf 'failed=%s\\nmessage=%s\\n' "$i" "$(printf '%s' "\${err:-xdotool exited $code}" | tr '\\n' ' ' | cut -c1-1000)"
      break
    fi
  fi
  i=$((i + 1))
done
printf 'applied=%s\\n' "$i"
xdotool getmouselocation --shell`;

const inflating = promisify(inflate);

/** After a helper failed to start in a computer, how long its requests take the one-command path. */
const HELPER_RETRY_MS = 1_000;
/** The most computers with helpers at once in this replica (two helpers each: screen and input). */
const MAX_HELPER_COMPUTERS = 1_000;

type Lane = 'screen' | 'input';

/**
 * The desktop of a driver that runs real computers (the Docker driver). Where the driver can keep a
 * process attached (`processes`), each computer gets two helpers (helper.ts), one for its screen and
 * one for its input, started by the first request of each kind and kept: a request is then a line
 * to a bash loop that is already there, not an Engine exec. A helper that dies is started again by
 * the next request; one that cannot start sends the computer's requests through the one-command path
 * (the driver's exec: a command per request) for {@link HELPER_RETRY_MS}. The computer's image has a
 * display on :0 (tools/images/desktop.sh: Xvfb, xdotool, xwd and netpbm, ImageMagick).
 *
 * @example
 * const desktop = new EngineDesktop(driver);
 */
export class EngineDesktop implements Desktop {
  private readonly helpers = new Map<string, Promise<DesktopHelper> | number>();
  /** Each computer's last picture: its deflated pixels as the helper sent them, its size, its PNG. */
  private readonly pictures = new Map<
    string,
    { pixels: Buffer; width: number; height: number; png: Uint8Array }
  >();

  constructor(private readonly driver: ComputerDriver) {}

  /** The computer's helper of that lane, started if need be; undefined: take the one-command path. */
  private async helper(computer: DesktopComputer, lane: Lane): Promise<DesktopHelper | undefined> {
    const processes = this.driver.processes;
    if (!processes) return undefined;
    const key = `${computer.id}/${lane}`;
    const entry = this.helpers.get(key);
    if (typeof entry === 'number') {
      if (Date.now() - entry < HELPER_RETRY_MS) return undefined;
      this.helpers.delete(key);
    } else if (entry) {
      const helper = await entry.catch(() => undefined);
      if (helper?.alive) return helper;
      if (this.helpers.get(key) === entry) this.helpers.delete(key);
    }
    if (this.helpers.size >= MAX_HELPER_COMPUTERS * 2) return undefined;
    const started = DesktopHelper.start(processes, computer, MAX_PNG_BYTES);
    this.helpers.set(key, started);
    try {
      return await started;
    } catch (error) {
      // The computer stopped under it, or its screen is not up yet: say so (the one-command path
      // would find the same, only later), and start a helper again on the next request.
      if (
        error instanceof DriverError &&
        (error.code === 'invalid_state' || error.details.reason === 'screen_not_ready')
      ) {
        this.helpers.delete(key);
        throw error;
      }
      // No helper here (no python3 in the image, an Engine hiccup): the one-command path, and a new
      // try a moment later.
      this.helpers.set(key, Date.now());
      return undefined;
    }
  }

  /** Stops every helper (the app is closing). */
  close(): void {
    for (const entry of this.helpers.values())
      if (typeof entry !== 'number')
        void entry.then(
          (helper) => helper.kill(),
          () => {},
        );
    this.helpers.clear();
    this.pictures.clear();
  }

  async screenshot(
    computer: Parameters<Desktop['screenshot']>[0],
    scale: Parameters<Desktop['screenshot']>[1],
    signal: AbortSignal,
  ): Promise<Screenshot> {
    const size = scaledSize(computer.screen, scale);
    const helper = await this.helper(computer, 'screen');
    if (helper) {
      const raw = await helper.shot(SCREENSHOT_TIMEOUT_MS, signal);
      const screen = { width: raw.width, height: raw.height };
      const picture = scaledSize(screen, scale);
      // The same pixels as the last picture of this size (a screen watched while nothing moves): the same PNG.
      const kept = this.pictures.get(computer.id);
      if (
        kept &&
        kept.width === picture.width &&
        kept.height === picture.height &&
        kept.pixels.equals(raw.body)
      )
        return { png: kept.png, screen, cursor: raw.cursor };
      // The helper's word for the size is bounded by the API's: a picture is never larger than a screen may be.
      if (screen.width > SCREEN_BOUNDS.maxWidth || screen.height > SCREEN_BOUNDS.maxHeight)
        throw new DriverError('unavailable', 'the computer could not take a screenshot; retry shortly');
      const bytes = screen.width * screen.height * 4;
      const pixels = await inflating(raw.body, { maxOutputLength: bytes }).catch(() => undefined);
      if (!pixels || pixels.length !== bytes)
        throw new DriverError('unavailable', 'the computer could not take a screenshot; retry shortly');
      const png = await pngOfRows(
        rgbRows(pixels, screen, raw.byteOrder, picture),
        picture.width,
        picture.height,
      );
      if (this.pictures.size >= MAX_HELPER_COMPUTERS) this.pictures.clear();
      this.pictures.set(computer.id, { ...picture, pixels: Buffer.from(raw.body), png });
      return { png, screen, cursor: raw.cursor };
    }
    const resize =
      size.width === computer.screen.width && size.height === computer.screen.height
        ? []
        : ['-resize', `${size.width}x${size.height}!`];
    const result = await this.driver.exec(computer, {
      argv: ['bash', '-c', SCREENSHOT_SCRIPT, 'screenshot', ...resize],
      timeoutMs: SCREENSHOT_TIMEOUT_MS,
      maxOutputBytes: MAX_PNG_BYTES,
      signal,
    });
    const said = new TextDecoder().decode(result.stderr);
    const geometry = /^(\d+) (\d+)$/m.exec(said);
    const cursor = pointer(said);
    if (result.exitCode !== 0 || !geometry || !cursor || result.stdoutTruncated)
      throw new DriverError('unavailable', 'the computer could not take a screenshot; retry shortly', {
        exit_code: result.exitCode,
        said: said.slice(0, 500),
      });
    return {
      png: result.stdout,
      screen: { width: Number(geometry[1]), height: Number(geometry[2]) },
      cursor,
    };
  }

  async input(
    computer: Parameters<Desktop['input']>[0],
    actions: readonly InputAction[],
    signal: AbortSignal,
  ): Promise<InputOutcome> {
    const argv: string[] = [];
    let budgetMs = INPUT_SLACK_MS;
    for (const action of actions) {
      const args = xdotoolArgs(action);
      argv.push(String(args.length), ...args);
      budgetMs += (action.milliseconds ?? 0) + (action.text?.length ?? 0) * 20;
    }
    const helper = await this.helper(computer, 'input');
    if (helper) return helper.input(actions.map(helperSteps), budgetMs, signal);
    const result = await this.driver.exec(computer, {
      argv: ['bash', '-c', INPUT_SCRIPT, 'input', ...argv],
      timeoutMs: budgetMs,
      maxOutputBytes: 64 * 1024,
      signal,
    });
    const said = new TextDecoder().decode(result.stdout);
    const applied = /^applied=(\d+)$/m.exec(said);
    const cursor = pointer(said);
    if (result.exitCode !== 0 || !applied || !cursor)
      throw new DriverError('unavailable', 'the computer could not take the input; retry shortly', {
        exit_code: result.exitCode,
        said: new TextDecoder().decode(result.stderr).slice(0, 500),
      });
    const failed = /^failed=(\d+)$/m.exec(said);
    const message = /^message=(.*)$/m.exec(said)?.[1]?.trim();
    return {
      applied: Number(applied[1]),
      cursor,
      ...(failed ? { failed: { index: Number(failed[1]), message: message || 'the action failed' } } : {}),
    };
  }
}

/** The pointer from `xdotool getmouselocation --shell` (`X=…`, `Y=…` lines). */
function pointer(said: string): Cursor | undefined {
  const x = /^X=(\d+)$/m.exec(said);
  const y = /^Y=(\d+)$/m.exec(said);
  return x && y ? { x: Number(x[1]), y: Number(y[1]) } : undefined;
}
