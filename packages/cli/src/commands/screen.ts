// `svc computers screenshot` and `svc computers input`: a computer's screen to a PNG file, and mouse and
// keyboard input written as words (`click 640 400 then type hello`) rather than JSON. The API's
// `downloadComputerScreen` and `inputComputer` underneath (`@svc/client/screen` for the picture).
import { writeFileSync } from 'node:fs';
import type { SvcClient } from '@svc/client';
import { type Command, Option } from 'commander';
import { apiClient, type Context } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import { outputOptions, printResult } from '../output/print.js';
import { commandTable } from '../spec/commands.js';
import { advise } from './advice.js';

/** The path of the screenshot; `input` is beside it. */
export const SCREEN_PATH = '/workspaces/{workspace}/computers/{computer}/screen';
/** The path `svc computers input` posts to (it replaces the generic command of that operation). */
export const INPUT_PATH = '/workspaces/{workspace}/computers/{computer}/input';

const SCREENSHOT_HELP = `
-o names the file the PNG goes to, or - for stdout (-o ./json for a file named json). stderr (or
stdout, when the picture went to a file) says the picture's bytes, the screen's size and where the
pointer is; with --json that line is JSON. Coordinates for \`svc computers input\` are the screen's
pixels, whatever --width made of the picture.

  svc computers screenshot dev desk -o shot.png
  svc computers screenshot dev desk -o shot.png --width 640
  svc computers screenshot dev desk -o - | display
`;

const INPUT_HELP = `
Actions are words, applied in order; several may follow one another, optionally separated by then:

  click [X Y]                 left click, at X Y or where the pointer is
  right-click | middle-click | double-click | triple-click [X Y]
  move X Y                    move the pointer
  drag X1 Y1 X2 Y2            press at X1 Y1, move to X2 Y2, release
  scroll up|down|left|right [N]   N wheel notches (default 3)
  type TEXT                   type TEXT as keystrokes (quote it)
  key COMBO                   a key combination, as xdotool names keys: ctrl+s, Return, alt+F4
  wait MS                     wait MS milliseconds (at most 2000 each)

Coordinates are the screen's pixels (svc computers screenshot says its size). stdout says where the
pointer is after them. When an action fails in the computer (an unknown key), stderr names it by its
number and what the computer said, and the exit code is 1; the actions after it are not applied.
--actions takes the API's JSON list instead. Input needs the role that runs commands.

  svc computers input dev desk click 640 400
  svc computers input dev desk double-click 100 200 then type "hello" then key ctrl+s
  svc computers input dev desk drag 10 10 300 200 scroll down 5 wait 500
  svc computers input dev desk --actions '[{"type":"key","keys":"Return"}]'
`;

/** One action of the API's `InputAction` (the spec's flat object with a `type`). */
export type InputWords = Record<string, string | number>;

const CLICKS: Readonly<Record<string, InputWords>> = {
  click: { type: 'click' },
  'left-click': { type: 'click' },
  'right-click': { type: 'click', button: 'right' },
  'middle-click': { type: 'click', button: 'middle' },
  'double-click': { type: 'click', count: 2 },
  'triple-click': { type: 'click', count: 3 },
};
const DIRECTIONS: Readonly<Record<string, [string, number]>> = {
  up: ['delta_y', -1],
  down: ['delta_y', 1],
  left: ['delta_x', -1],
  right: ['delta_x', 1],
};

const usage = (code: string, message: string) => new CliError('usage', code, message);
const isInteger = (word: string | undefined) => word !== undefined && /^-?[0-9]+$/.test(word);

/**
 * Reads input actions written as words (`click 640 400 then type hello`) into the API's actions.
 * Throws a usage error naming the word it could not read.
 *
 * @example
 * parseInputWords(['click', '640', '400', 'then', 'key', 'ctrl+s']);
 * // [{ type: 'click', x: 640, y: 400 }, { type: 'key', keys: 'ctrl+s' }]
 */
export function parseInputWords(words: readonly string[]): InputWords[] {
  const actions: InputWords[] = [];
  let i = 0;
  const numbers = (verb: string, count: number): number[] => {
    const taken = words.slice(i, i + count);
    if (taken.length < count || !taken.every(isInteger))
      throw usage('bad_action', `${verb} takes ${count} whole numbers, not "${taken.join(' ')}".`);
    i += count;
    return taken.map(Number);
  };
  const text = (verb: string): string => {
    const word = words[i++];
    if (word === undefined || word === '') throw usage('bad_action', `${verb} needs a text after it.`);
    return word;
  };
  while (i < words.length) {
    const verb = words[i++] as string;
    if (verb === 'then' || verb === ',') continue;
    const click = CLICKS[verb];
    if (click) {
      const at = isInteger(words[i]) ? numbers(verb, 2) : [];
      actions.push({ ...click, ...(at.length ? { x: at[0] as number, y: at[1] as number } : {}) });
    } else if (verb === 'move') {
      const [x, y] = numbers(verb, 2) as [number, number];
      actions.push({ type: 'move', x, y });
    } else if (verb === 'drag') {
      const [x, y, toX, toY] = numbers(verb, 4) as [number, number, number, number];
      actions.push({ type: 'drag', x, y, to_x: toX, to_y: toY });
    } else if (verb === 'scroll') {
      const direction = DIRECTIONS[words[i] ?? ''];
      if (!direction) throw usage('bad_action', 'scroll takes up, down, left or right, then notches.');
      i++;
      const notches = isInteger(words[i]) ? (numbers(verb, 1)[0] as number) : 3;
      actions.push({ type: 'scroll', [direction[0]]: direction[1] * notches });
    } else if (verb === 'type') actions.push({ type: 'type', text: text(verb) });
    else if (verb === 'key') actions.push({ type: 'key', keys: text(verb) });
    else if (verb === 'wait') actions.push({ type: 'wait', milliseconds: numbers(verb, 1)[0] as number });
    else
      throw usage(
        'unknown_action',
        `"${verb}" is no action: click, right-click, middle-click, double-click, triple-click, move, drag, scroll, type, key, wait (svc computers input --help).`,
      );
  }
  return actions;
}

const positiveInteger = (flag: string) => (value: string) => {
  if (!/^[1-9][0-9]*$/.test(value)) throw usage('bad_number', `${flag}: a whole number of pixels.`);
  return Number(value);
};

/** Adds `svc computers screenshot` and `svc computers input` to the computers group. */
export function addScreenCommands(group: Command, context: () => Context): void {
  group
    .command('screenshot')
    .summary("Save a computer's screen as a PNG")
    .description(`Take a screenshot of a computer's screen, as a PNG.\n\nGET ${SCREEN_PATH}`)
    .argument('<workspace>', 'the workspace id or name')
    .argument('<computer>', 'the computer id or name')
    .addOption(
      new Option('--width <pixels>', 'scale the picture down to at most this wide').argParser(
        positiveInteger('--width'),
      ),
    )
    .addOption(
      new Option('--height <pixels>', 'scale the picture down to at most this high').argParser(
        positiveInteger('--height'),
      ),
    )
    .addHelpText('after', SCREENSHOT_HELP)
    .action(
      async (
        workspace: string,
        computer: string,
        flags: { width?: number; height?: number },
        command: Command,
      ) => {
        const output = outputOptions(command, true);
        if (output.keyPath === undefined)
          throw usage('no_output', 'screenshot needs -o <file.png>, or -o - for stdout.');
        const client = await apiClient(context());
        const { screenshot } = await import('@svc/client/screen');
        const shot = await guarded(client, command, SCREEN_PATH, 'get', { workspace, computer }, () =>
          screenshot(client, workspace, computer, { maxWidth: flags.width, maxHeight: flags.height }),
        );
        const { io } = context();
        const toStdout = output.keyPath === '-';
        if (toStdout) io.stdout.write(shot.png);
        else writeFileSync(output.keyPath, shot.png);
        const said = { bytes: shot.png.byteLength, screen: shot.screen, cursor: shot.cursor };
        const line =
          output.format === 'json'
            ? `${JSON.stringify(said)}\n`
            : `${toStdout ? '' : `${output.keyPath}: `}${said.bytes} bytes; screen ${shot.screen.width}x${shot.screen.height}; pointer at ${shot.cursor.x},${shot.cursor.y}\n`;
        (toStdout ? io.stderr : io.stdout).write(line);
      },
    );

  group
    .command('input')
    .summary("Send mouse and keyboard input to a computer's screen")
    .description(
      `Send mouse and keyboard input to a computer's screen, in order.\n\nPOST ${INPUT_PATH} (inputComputer)`,
    )
    .argument('<workspace>', 'the workspace id or name')
    .argument('<computer>', 'the computer id or name')
    .argument('[actions...]', 'the actions, as words (below)')
    .option('--actions <json>', "the API's list of actions as JSON, instead of words")
    .option('--idempotency-key <key>', 'the Idempotency-Key (repeat it to retry safely)')
    .addHelpText('after', INPUT_HELP)
    .action(
      async (
        workspace: string,
        computer: string,
        words: string[],
        flags: { actions?: string; idempotencyKey?: string },
        command: Command,
      ) => {
        const actions =
          flags.actions === undefined ? parseInputWords(words) : parseJsonActions(flags.actions, words);
        if (actions.length === 0)
          throw usage('no_actions', 'Name at least one action: svc computers input --help.');
        const output = outputOptions(command);
        const client = await apiClient(context());
        const answer = await guarded(
          client,
          command,
          INPUT_PATH,
          'post',
          { workspace, computer },
          async () => {
            const { data, error, response } = await (client as unknown as { POST: Post }).POST(INPUT_PATH, {
              params: {
                path: { workspace, computer },
                header: { 'Idempotency-Key': flags.idempotencyKey ?? globalThis.crypto.randomUUID() },
              },
              body: { actions },
            });
            if (!response.ok) {
              const { errorFromResponse } = await import('@svc/client');
              throw errorFromResponse(response, error);
            }
            return data as { input: InputAnswer };
          },
        );
        const { input } = answer;
        const { io } = context();
        if (output.format !== 'table' || output.query !== undefined)
          await printResult(context(), command, answer, output);
        else
          io.stdout.write(
            `pointer at ${input.cursor.x},${input.cursor.y}${input.simulated ? ' (simulated)' : ''}\n`,
          );
        if (input.failed) {
          const failed = actions[input.failed.index];
          throw new CliError(
            'error',
            'action_failed',
            `action ${input.failed.index + 1} (${failed?.type ?? '?'}) failed: ${input.failed.message}; ${input.applied} applied before it`,
          );
        }
      },
    );
}

interface InputAnswer {
  applied: number;
  cursor: { x: number; y: number };
  failed?: { index: number; message: string };
  simulated?: boolean;
}

type Post = (
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

function parseJsonActions(text: string, words: readonly string[]): InputWords[] {
  if (words.length > 0) throw usage('two_forms', 'Give the actions as words or as --actions JSON, not both.');
  try {
    const value = JSON.parse(text) as unknown;
    if (Array.isArray(value)) return value as InputWords[];
  } catch {}
  throw usage('bad_actions', '--actions takes a JSON list: \'[{"type":"click","x":640,"y":400}]\'.');
}

/** Runs a call; a refusal gets the near names and the command's words, as every command's does. */
async function guarded<T>(
  client: SvcClient,
  command: Command,
  path: string,
  method: string,
  params: { workspace: string; computer: string },
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const spec = commandTable().find((c) => c.operation.path === path && c.operation.method === method);
    if (spec)
      await advise(error, client, { spec, command, path: params, query: {}, header: {}, body: undefined });
    throw error;
  }
}
