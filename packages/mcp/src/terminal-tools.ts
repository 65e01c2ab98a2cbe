// The tools an agent drives a terminal with (`python3`, `vim`, a password prompt): the spec's input
// operation (`sendComputerTerminalInput`, bytes) becomes a tool that takes keys as text, named keys in
// angle brackets (`<Enter>`, `<Esc>`, `<C-c>`, `<Up>`), waits for the output to settle and answers the
// screen as text; the screen operation (`getComputerTerminalScreen`) answers the screen as text too, so
// an agent reads a full-screen program without parsing escape sequences.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SvcClient } from '@svc/client';
import { getTerminal, readTerminalScreen, type TerminalScreen, writeTerminal } from '@svc/client/terminals';
import { kindBytes, type OpenApiDocument, type OperationInfo, operationKind } from '@svc/contract';
import { successResult, textError } from './results.js';
import type { JsonSchema } from './schema.js';
import { strictSchema } from './strict.js';
import type { ToolDefinition } from './tools.js';

/** The longest a keys call waits for the output to settle. */
export const SETTLE_MAX_MS = 5_000;

const CSI = '\x1b[';
const SS3 = '\x1bO';

/** Named keys and the bytes a terminal (xterm, normal cursor mode) sends for them. */
const KEYS: Readonly<Record<string, string>> = {
  enter: '\r',
  cr: '\r',
  return: '\r',
  tab: '\t',
  esc: '\x1b',
  escape: '\x1b',
  bs: '\x7f',
  backspace: '\x7f',
  space: ' ',
  lt: '<',
  up: `${CSI}A`,
  down: `${CSI}B`,
  right: `${CSI}C`,
  left: `${CSI}D`,
  home: `${CSI}H`,
  end: `${CSI}F`,
  insert: `${CSI}2~`,
  del: `${CSI}3~`,
  delete: `${CSI}3~`,
  pageup: `${CSI}5~`,
  pagedown: `${CSI}6~`,
  f1: `${SS3}P`,
  f2: `${SS3}Q`,
  f3: `${SS3}R`,
  f4: `${SS3}S`,
  f5: `${CSI}15~`,
  f6: `${CSI}17~`,
  f7: `${CSI}18~`,
  f8: `${CSI}19~`,
  f9: `${CSI}20~`,
  f10: `${CSI}21~`,
  f11: `${CSI}23~`,
  f12: `${CSI}24~`,
};

/** `C-c`, `Ctrl-c`, `ctrl+C`, `^C`: a control key, the character's code with the top bits cleared. */
const CONTROL = /^(?:c-|ctrl[-+]|\^)([a-z@[\\\]^_ ?])$/i;

/** The bytes of one key name (without brackets), or undefined when it names no key. */
function keyBytes(name: string): string | undefined {
  const named = KEYS[name.toLowerCase()];
  if (named !== undefined) return named;
  const control = CONTROL.exec(name)?.[1];
  if (control === undefined) return undefined;
  if (control === '?') return '\x7f';
  return String.fromCharCode(control.toUpperCase().charCodeAt(0) & 0x1f);
}

/**
 * The bytes of a keys string: text as typed (UTF-8), `<Name>` as the key it names; a bracketed word
 * that names no key is typed as it is (`<div>`), and `<lt>` types a `<`.
 *
 * @example
 * keysToBytes('print(6*7)<Enter>'); // 'print(6*7)\r' as bytes
 * keysToBytes('<Esc>:wq<Enter>'); // '\x1b:wq\r'
 * keysToBytes('<C-c>'); // '\x03'
 */
export function keysToBytes(keys: string): Uint8Array {
  const text = keys.replace(/<([^<>\s]{1,10})>/g, (whole, name: string) => keyBytes(name) ?? whole);
  return new TextEncoder().encode(text);
}

/**
 * The screen as text for a model: a header with the size and the cursor, then the rows as they show
 * (trailing empty rows left out and counted).
 *
 * @example
 * screenText({ cols: 80, rows: 3, lines: ['$ echo hi', 'hi', '$'], cursor: { x: 2, y: 2 } });
 */
export function screenText(screen: TerminalScreen): string {
  let last = screen.lines.length;
  while (last > 0 && screen.lines[last - 1] === '') last -= 1;
  const blank = screen.lines.length - last;
  const header = `Screen ${screen.cols}x${screen.rows}, cursor at row ${screen.cursor.y + 1}, column ${screen.cursor.x + 1} (from 1):`;
  const footer = blank > 0 ? `\n(${blank} empty row${blank === 1 ? '' : 's'} below)` : '';
  return `${header}\n${screen.lines.slice(0, last).join('\n')}${footer}`;
}

const KEYS_DESCRIPTION =
  'What to type. Text is typed as it is (UTF-8); a key is its name in angle brackets: <Enter>, <Tab>, <Esc>, <Backspace>, <Space>, <Up>, <Down>, <Left>, <Right>, <Home>, <End>, <PageUp>, <PageDown>, <Delete>, <Insert>, <F1>…<F12>, control keys as <C-c> (Ctrl-C), <C-d>, <C-z>, <C-[>; <lt> types a <. A bracketed word that names no key is typed as it is. Examples: "print(6*7)<Enter>", "<Esc>:wq<Enter>", "<C-c>".';

/** What the keys tool answers. */
const KEYS_OUTPUT: JsonSchema & { type: 'object' } = {
  type: 'object',
  required: ['sent_bytes', 'state'],
  properties: {
    sent_bytes: { type: 'integer', minimum: 0, description: 'Bytes typed into the terminal.' },
    state: { type: 'string', description: 'The terminal’s state after waiting: `open`, or `closed`.' },
    exit_code: { type: 'integer', description: 'Once `closed`: its program’s exit status, when known.' },
    screen: {
      type: 'object',
      description:
        'The screen once the output settled (left out with settle_ms 0); a closed terminal’s last.',
      required: ['cols', 'rows', 'lines', 'cursor'],
      properties: {
        cols: { type: 'integer' },
        rows: { type: 'integer' },
        lines: { type: 'array', items: { type: 'string' } },
        cursor: {
          type: 'object',
          required: ['x', 'y'],
          properties: { x: { type: 'integer' }, y: { type: 'integer' } },
        },
      },
    },
  },
};

/**
 * The tool of a terminal operation that is not plain JSON: the input's (`send_…`, bytes) as a keys tool
 * that answers the screen, or the screen's, answered as text. Undefined for the others, which stay as
 * derived.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'sendComputerTerminalInput')!;
 * terminalTool(doc, op, toolFromOperation(doc, op))?.terminal?.kind; // 'keys'
 */
export function terminalTool(
  document: OpenApiDocument,
  op: OperationInfo,
  base: ToolDefinition,
): ToolDefinition | undefined {
  if (base.toolset !== 'terminals') return undefined;
  if (op.method === 'get' && /\/screen$/.test(op.path)) {
    const note = 'This tool answers the screen as text: a line with its size and the cursor, then its rows.';
    return { ...base, description: `${base.description}\n\n${note}`, terminal: { kind: 'screen', note } };
  }
  const bytesIn = kindBytes(operationKind(document, op))?.direction === 'in';
  if (op.method !== 'post' || !bytesIn || !op.operationId.startsWith('send')) return undefined;
  const { body: _, ...properties } = base.inputSchema.properties as Record<string, JsonSchema>;
  const required = ((base.inputSchema.required as string[] | undefined) ?? []).filter((n) => n !== 'body');
  const { body: __, ...targets } = base.targets;
  properties.keys = { type: 'string', minLength: 1, maxLength: 16_384, description: KEYS_DESCRIPTION };
  properties.settle_ms = {
    type: 'integer',
    minimum: 0,
    maximum: SETTLE_MAX_MS,
    default: 300,
    description: `Then wait until the screen has not changed for this long (at most ${SETTLE_MAX_MS / 1000} s in all) and answer it. 0: answer at once, without the screen.`,
  };
  required.push('keys');
  const note =
    'This tool takes keys as text (named keys in angle brackets), types them, waits for the output to settle and answers the screen as text: drive `python3`, `vim` or a prompt this way; get_computer_terminal_screen reads the screen again.';
  return {
    ...base,
    description: `${base.description}\n\n${note}`,
    inputSchema: strictSchema({ ...base.inputSchema, properties, required }),
    outputSchema: strictSchema(KEYS_OUTPUT),
    targets,
    bodyRequired: false,
    terminal: { kind: 'keys', note },
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Reads the screen until it has not changed for `settleMs` (at most {@link SETTLE_MAX_MS} in all). */
async function settledScreen(
  client: SvcClient,
  ref: { workspace: string; computer: string; terminal: string },
  settleMs: number,
  signal: AbortSignal,
): Promise<TerminalScreen> {
  const deadline = Date.now() + SETTLE_MAX_MS;
  const step = Math.max(50, Math.min(200, settleMs / 3));
  let screen = await readTerminalScreen(client, ref);
  let since = Date.now();
  while (Date.now() - since < settleMs && Date.now() < deadline) {
    await sleep(step, signal);
    const next = await readTerminalScreen(client, ref);
    if (JSON.stringify(next) !== JSON.stringify(screen)) {
      screen = next;
      since = Date.now();
    }
  }
  return screen;
}

/**
 * Runs a terminal tool ({@link terminalTool}): types the keys and answers the settled screen, or reads
 * the screen, as text (and as `structuredContent`). An API refusal is thrown (`ApiError`), as a plain
 * call's is.
 *
 * @example
 * const result = await callTerminalTool(client, tool, { workspace: 'dev', computer: 'box', terminal: '01m6…', keys: 'ls<Enter>' }, signal);
 */
export async function callTerminalTool(
  client: SvcClient,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const ref = {
    workspace: String(args.workspace),
    computer: String(args.computer),
    terminal: String(args.terminal),
  };
  if (tool.terminal?.kind === 'screen') {
    const screen = await readTerminalScreen(client, ref);
    return { content: [{ type: 'text', text: screenText(screen) }], structuredContent: { screen } };
  }
  const keys = typeof args.keys === 'string' ? args.keys : '';
  if (keys === '') return textError('keys: give the text and keys to type, e.g. "ls<Enter>".');
  const bytes = keysToBytes(keys);
  await writeTerminal(client, ref, bytes, {
    idempotencyKey: typeof args.idempotency_key === 'string' ? args.idempotency_key : undefined,
    signal,
  });
  const settleMs = typeof args.settle_ms === 'number' ? args.settle_ms : 300;
  const screen = settleMs > 0 ? await settledScreen(client, ref, settleMs, signal) : undefined;
  const terminal = await getTerminal(client, ref);
  const answer = {
    sent_bytes: bytes.byteLength,
    state: terminal.state,
    ...(terminal.exit_code === undefined ? {} : { exit_code: terminal.exit_code }),
    ...(screen ? { screen } : {}),
  };
  const ended =
    terminal.state === 'open'
      ? ''
      : ` The terminal is ${terminal.state}${terminal.exit_code === undefined ? '' : `, exit code ${terminal.exit_code}`}.`;
  const note = `Typed ${bytes.byteLength} bytes.${ended}`;
  if (answer.screen === undefined) return successResult(answer, { note });
  return {
    content: [{ type: 'text', text: `${note} ${screenText(answer.screen)}` }],
    structuredContent: answer,
  };
}
