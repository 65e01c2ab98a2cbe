// The screen tool (`use_computer_screen`): one tool with the computer-use action set agents already
// know (`screenshot`, `left_click`, `type`, `key`, …; Anthropic's computer-use tool has these names),
// mapped onto the spec's two screen operations: a screenshot is `downloadComputerScreen`, answered as
// MCP image content; every other action is one `inputComputer` request. The generic `input_computer`
// stays beside it for a list of actions in one call.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorFromResponse, type SvcClient } from '@svc/client';
import { screenshot } from '@svc/client/screen';
import {
  kindBytes,
  listOperations,
  type OpenApiDocument,
  type OperationInfo,
  operationKind,
  requestBody,
} from '@svc/contract';
import { inlineRefs, type JsonSchema } from './schema.js';
import { strictSchema } from './strict.js';
import type { ToolDefinition } from './tools.js';
import { SCREENS_TOOLSET } from './toolsets.js';

/** The tool's name: a verb and what it acts on, as the other tools' (`read_computer_file`). */
export const SCREEN_TOOL_NAME = 'use_computer_screen';

/** The actions, as the computer-use tools name them. */
export const SCREEN_ACTIONS = [
  'screenshot',
  'left_click',
  'right_click',
  'middle_click',
  'double_click',
  'mouse_move',
  'left_click_drag',
  'scroll',
  'type',
  'key',
  'cursor_position',
  'wait',
] as const;

type ScreenAction = (typeof SCREEN_ACTIONS)[number];
type Args = Record<string, unknown>;
type InputAction = Record<string, string | number>;

/** The longest `wait`, in seconds: the API allows 10,000 ms of waits in one request (design §18). */
const MAX_WAIT_SECONDS = 10;

const POINT: JsonSchema = {
  type: 'array',
  items: { type: 'integer', minimum: 0 },
  minItems: 2,
  maxItems: 2,
};

const OUTPUT: JsonSchema & { type: 'object' } = {
  type: 'object',
  required: ['action', 'cursor'],
  properties: {
    action: { type: 'string', description: 'The action done.' },
    cursor: {
      type: 'object',
      required: ['x', 'y'],
      properties: { x: { type: 'integer' }, y: { type: 'integer' } },
      description: 'Where the pointer is after it, in the screen’s pixels.',
    },
    screen: {
      type: 'object',
      required: ['width', 'height'],
      properties: { width: { type: 'integer' }, height: { type: 'integer' } },
      description: 'The screen’s size (with a screenshot): the space coordinates are in.',
    },
    failed: {
      type: 'object',
      required: ['index', 'message'],
      properties: { index: { type: 'integer' }, message: { type: 'string' } },
      description: 'The input that failed, and what the computer said.',
    },
    simulated: { type: 'boolean', description: 'The simulated driver: input echoed, nothing clicked.' },
  },
};

const DESCRIPTION = [
  'See and drive a computer’s screen as a person would, with the computer-use actions: `screenshot` (answered as a PNG image), `left_click`, `right_click`, `middle_click`, `double_click` (at `coordinate`, else where the pointer is), `mouse_move` (to `coordinate`), `left_click_drag` (from `start_coordinate` to `coordinate`), `scroll` (`scroll_direction` and `scroll_amount` notches, at `coordinate` if given), `type` (`text` as keystrokes), `key` (`text` a key combination as xdotool names keys: `ctrl+s`, `Return`, `alt+F4`), `cursor_position`, `wait` (`duration` seconds).',
  'Coordinates are `[x, y]` in the screen’s own pixels, whatever `max_width` made of the picture: a screenshot states the screen’s size.',
  'Only a computer whose image has a display (`display: true` in list_images, e.g. `debian-13-desktop`) has a screen; others answer 409 invalid_state (reason no_display). Looking needs any role; every other action needs the role that runs commands. `screenshot_after: true` adds a screenshot to any action’s answer.',
  'API: GET …/computers/{computer}/screen and POST …/computers/{computer}/input.',
].join('\n\n');

/** The screenshot operation (the one answering `image/png`) and the input operation beside it. */
function screenOperations(document: OpenApiDocument) {
  const operations = listOperations(document);
  const picture = operations.find((op) => {
    const bytes = kindBytes(operationKind(document, op));
    return bytes?.direction === 'out' && bytes.body.mediaType === 'image/png';
  });
  if (!picture) return undefined;
  const inputPath = `${picture.path.slice(0, picture.path.lastIndexOf('/'))}/input`;
  const input = operations.find((op) => op.path === inputPath && op.method === 'post');
  return input ? { picture, input } : undefined;
}

/** The spec's `InputAction` properties, `$ref`s inlined, for the bounds this tool states. */
function actionFields(document: OpenApiDocument, input: OperationInfo): Record<string, JsonSchema> {
  const body = inlineRefs(document, requestBody(document, input)?.schema ?? {}) as JsonSchema;
  const actions = (body.properties as Record<string, JsonSchema> | undefined)?.actions;
  return ((actions?.items as JsonSchema | undefined)?.properties ?? {}) as Record<string, JsonSchema>;
}

/**
 * The screen tool, when the document has a screenshot operation and its input beside it: its
 * arguments are the picture's path and scaling parameters (the spec's) and the computer-use ones,
 * bounded by the spec's `InputAction` where it states a bound.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * screenTool(loadDocument(), picture)?.name; // 'use_computer_screen'
 */
export function screenTool(
  document: OpenApiDocument,
  pictureTool: ToolDefinition,
): ToolDefinition | undefined {
  const ops = screenOperations(document);
  if (!ops || pictureTool.operation.operationId !== ops.picture.operationId) return undefined;
  const fields = actionFields(document, ops.input);
  const pictureArgs = pictureTool.inputSchema.properties as Record<string, JsonSchema>;
  const notches = (fields.delta_y?.maximum as number | undefined) ?? 50;
  const properties: Record<string, JsonSchema> = {
    ...pictureArgs,
    action: { type: 'string', enum: [...SCREEN_ACTIONS], description: 'What to do (see the tool).' },
    coordinate: { ...POINT, description: '`[x, y]`: where to click, move, scroll, or end a drag.' },
    start_coordinate: { ...POINT, description: '`[x, y]`: where a `left_click_drag` starts.' },
    text: {
      type: 'string',
      minLength: 1,
      maxLength: (fields.text?.maxLength as number | undefined) ?? 1000,
      description: 'The text of `type`, or the key combination of `key`.',
    },
    scroll_direction: { type: 'string', enum: ['up', 'down', 'left', 'right'] },
    scroll_amount: { type: 'integer', minimum: 1, maximum: notches, default: 3, description: 'Notches.' },
    duration: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: MAX_WAIT_SECONDS,
      description: 'Seconds a `wait` waits.',
    },
    screenshot_after: {
      type: 'boolean',
      default: false,
      description: 'Answer a screenshot after the action too.',
    },
  };
  const title = 'Use a computer’s screen';
  return {
    name: SCREEN_TOOL_NAME,
    title,
    description: DESCRIPTION,
    inputSchema: strictSchema({
      type: 'object',
      properties,
      required: ['workspace', 'computer', 'action'],
      additionalProperties: false,
    }),
    outputSchema: OUTPUT,
    // A click or a keystroke may change or remove anything in the computer, and acts again each call.
    annotations: {
      title,
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    operation: ops.input,
    toolset: SCREENS_TOOLSET,
    targets: {},
    longRunning: false,
    bodyRequired: false,
    screen: {
      picture: ops.picture,
      input: ops.input,
      maxWaitMs: (fields.milliseconds?.maximum as number | undefined) ?? 2000,
    },
  };
}

const point = (value: unknown) => (Array.isArray(value) ? (value as number[]) : undefined);
const at = (value: unknown): InputAction => {
  const p = point(value);
  return p ? { x: p[0] as number, y: p[1] as number } : {};
};

/** The input actions of one tool action, or what is missing. */
export function inputActions(action: ScreenAction, args: Args, maxWaitMs = 2000): InputAction[] | string {
  const coordinate = point(args.coordinate);
  switch (action) {
    case 'left_click':
    case 'right_click':
    case 'middle_click':
      return [{ type: 'click', button: action.slice(0, action.indexOf('_')), ...at(coordinate) }];
    case 'double_click':
      return [{ type: 'click', count: 2, ...at(coordinate) }];
    case 'mouse_move':
      return coordinate ? [{ type: 'move', ...at(coordinate) }] : 'mouse_move needs `coordinate`.';
    case 'left_click_drag': {
      const start = point(args.start_coordinate);
      if (!start || !coordinate) return 'left_click_drag needs `start_coordinate` and `coordinate`.';
      return [{ type: 'drag', ...at(start), to_x: coordinate[0] as number, to_y: coordinate[1] as number }];
    }
    case 'scroll': {
      const amount = typeof args.scroll_amount === 'number' ? args.scroll_amount : 3;
      const direction = args.scroll_direction ?? 'down';
      const sign = direction === 'up' || direction === 'left' ? -1 : 1;
      const delta = direction === 'left' || direction === 'right' ? 'delta_x' : 'delta_y';
      return [{ type: 'scroll', [delta]: sign * amount, ...at(coordinate) }];
    }
    case 'type':
    case 'key':
      if (typeof args.text !== 'string') return `${action} needs \`text\`.`;
      return [action === 'type' ? { type: 'type', text: args.text } : { type: 'key', keys: args.text }];
    case 'wait': {
      if (typeof args.duration !== 'number') return 'wait needs `duration` (seconds).';
      const waits: InputAction[] = [];
      for (let left = Math.round(args.duration * 1000); left > 0; left -= maxWaitMs)
        waits.push({ type: 'wait', milliseconds: Math.min(left, maxWaitMs) });
      return waits;
    }
    default:
      return `no input for ${action}`;
  }
}

type Post = (
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

interface InputAnswer {
  applied: number;
  cursor: { x: number; y: number };
  failed?: { index: number; message: string };
  simulated?: boolean;
}

/**
 * Runs the screen tool: a screenshot (or `cursor_position`, read from a smallest screenshot's
 * headers, which needs no more than looking) through `@svc/client/screen`, every other action as one
 * `inputComputer` request. A refusal is thrown (`ApiError`), as a plain call's is; a failed action is
 * an `isError` result naming what the computer said.
 *
 * @example
 * const result = await callScreenTool(client, tool, { workspace: 'dev', computer: 'desk', action: 'screenshot' }, signal);
 */
export async function callScreenTool(
  client: SvcClient,
  tool: ToolDefinition,
  args: Args,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const workspace = String(args.workspace);
  const computer = String(args.computer);
  const action = args.action as ScreenAction;
  const look = async (small: boolean) =>
    screenshot(client, workspace, computer, {
      maxWidth: small ? 16 : (args.max_width as number | undefined),
      maxHeight: small ? 16 : (args.max_height as number | undefined),
      signal,
    });
  if (action === 'screenshot' || action === 'cursor_position') {
    const shot = await look(action === 'cursor_position');
    const body = { action, cursor: shot.cursor, screen: shot.screen };
    const line = `Pointer at ${shot.cursor.x},${shot.cursor.y}; screen ${shot.screen.width}x${shot.screen.height}.`;
    return {
      content: [
        { type: 'text', text: line },
        ...(action === 'screenshot' ? [image(shot.png)] : []),
        { type: 'text', text: JSON.stringify(body) },
      ],
      structuredContent: body,
    };
  }
  const actions = inputActions(action, args, tool.screen?.maxWaitMs);
  if (typeof actions === 'string') return { content: [{ type: 'text', text: actions }], isError: true };
  const route = tool.screen?.input.path ?? '';
  const post = (client as unknown as { POST: Post }).POST;
  const { data, error, response } = await post(route, {
    params: { path: { workspace, computer }, header: { 'Idempotency-Key': globalThis.crypto.randomUUID() } },
    body: { actions },
    signal,
  });
  if (!response.ok) throw errorFromResponse(response, error);
  const answer = (data as { input: InputAnswer }).input;
  const body = {
    action,
    cursor: answer.cursor,
    ...(answer.failed ? { failed: answer.failed } : {}),
    ...(answer.simulated === undefined ? {} : { simulated: answer.simulated }),
  };
  const failed = answer.failed ? ` Failed: ${answer.failed.message}` : '';
  const line = `${action}: pointer at ${answer.cursor.x},${answer.cursor.y}.${failed}`;
  const after = args.screenshot_after === true && !answer.failed ? await look(false) : undefined;
  return {
    content: [
      { type: 'text', text: line },
      ...(after ? [image(after.png)] : []),
      { type: 'text', text: JSON.stringify(after ? { ...body, screen: after.screen } : body) },
    ],
    structuredContent: after ? { ...body, screen: after.screen } : body,
    ...(answer.failed ? { isError: true } : {}),
  };
}

const image = (png: Uint8Array) =>
  ({ type: 'image', data: Buffer.from(png).toString('base64'), mimeType: 'image/png' }) as const;
