import type { ComputerDriver } from '../computers/driver.js';
import { DriverError } from '../computers/driver.js';
import { type InputAction, xdotoolArgs } from './actions.js';
import { type Cursor, type Desktop, type InputOutcome, type Screenshot, scaledSize } from './desktop.js';

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

/**
 * The desktop of a driver that runs real computers (the Docker driver): screenshots and input are
 * commands run inside the computer through the driver's exec, one per request. The computer's image
 * has a display on :0 (tools/images/desktop.sh: Xvfb, xdotool, ImageMagick).
 *
 * @example
 * const desktop = new EngineDesktop(driver);
 */
export class EngineDesktop implements Desktop {
  constructor(private readonly driver: ComputerDriver) {}

  async screenshot(
    computer: Parameters<Desktop['screenshot']>[0],
    scale: Parameters<Desktop['screenshot']>[1],
    signal: AbortSignal,
  ): Promise<Screenshot> {
    const size = scaledSize(computer.screen, scale);
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
