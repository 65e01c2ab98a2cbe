// The screen tool (`use_computer_screen`): how each computer-use action becomes input actions (a
// table), and a session through the official SDK client over HTTP against the real server on the
// simulated driver, whose screen is a PNG drawn in code: a screenshot as image content, clicks, typing,
// a key, a drag, the pointer where it was sent, a refusal and a missing argument.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { unwrap, waitForOperations } from '@svc/client';
import { createClient, readKeyFile } from '@svc/client/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputActions } from '../src/screen-tool.js';
import { realServer } from './support/real-server.js';

describe('inputActions: the computer-use actions as the API’s input actions', () => {
  it.each([
    [
      'left_click at a point',
      {
        given: ['left_click', { coordinate: [640, 400] }],
        want: [{ type: 'click', button: 'left', x: 640, y: 400 }],
      },
    ],
    [
      'right_click where the pointer is',
      { given: ['right_click', {}], want: [{ type: 'click', button: 'right' }] },
    ],
    [
      'middle_click',
      {
        given: ['middle_click', { coordinate: [1, 2] }],
        want: [{ type: 'click', button: 'middle', x: 1, y: 2 }],
      },
    ],
    [
      'double_click',
      { given: ['double_click', { coordinate: [5, 6] }], want: [{ type: 'click', count: 2, x: 5, y: 6 }] },
    ],
    ['mouse_move', { given: ['mouse_move', { coordinate: [7, 8] }], want: [{ type: 'move', x: 7, y: 8 }] }],
    ['mouse_move without a point', { given: ['mouse_move', {}], want: 'mouse_move needs `coordinate`.' }],
    [
      'left_click_drag',
      {
        given: ['left_click_drag', { start_coordinate: [1, 2], coordinate: [30, 40] }],
        want: [{ type: 'drag', x: 1, y: 2, to_x: 30, to_y: 40 }],
      },
    ],
    [
      'left_click_drag without a start',
      {
        given: ['left_click_drag', { coordinate: [30, 40] }],
        want: 'left_click_drag needs `start_coordinate` and `coordinate`.',
      },
    ],
    [
      'scroll down 3 by default',
      { given: ['scroll', { scroll_direction: 'down' }], want: [{ type: 'scroll', delta_y: 3 }] },
    ],
    [
      'scroll up at a point',
      {
        given: ['scroll', { scroll_direction: 'up', scroll_amount: 5, coordinate: [9, 9] }],
        want: [{ type: 'scroll', delta_y: -5, x: 9, y: 9 }],
      },
    ],
    [
      'scroll left',
      {
        given: ['scroll', { scroll_direction: 'left', scroll_amount: 2 }],
        want: [{ type: 'scroll', delta_x: -2 }],
      },
    ],
    ['type', { given: ['type', { text: 'hello' }], want: [{ type: 'type', text: 'hello' }] }],
    ['key', { given: ['key', { text: 'ctrl+s' }], want: [{ type: 'key', keys: 'ctrl+s' }] }],
    ['key without text', { given: ['key', {}], want: 'key needs `text`.' }],
    [
      'wait 4.5 s in waits of at most 2 s',
      {
        given: ['wait', { duration: 4.5 }],
        want: [
          { type: 'wait', milliseconds: 2000 },
          { type: 'wait', milliseconds: 2000 },
          { type: 'wait', milliseconds: 500 },
        ],
      },
    ],
  ] as const)('%s', (_, { given, want }) => {
    const [action, args] = given;
    expect(inputActions(action, args as Record<string, unknown>)).toEqual(want);
  });
});

const server = await realServer();
const skip = typeof server === 'string' ? server : false;
if (skip && process.env.CI) throw new Error(`screen-tool.test.ts cannot run under CI: ${skip}`);

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// biome-ignore lint/suspicious/noExplicitAny: the results are read as the tool answers them
type Json = Record<string, any>;

describe.skipIf(skip)('use_computer_screen against the server (simulated driver)', () => {
  const workspace = `mcp-screen-${Date.now().toString(36)}`;
  let mcp: Client;
  const use = async (args: Json) =>
    (await mcp.callTool({
      name: 'use_computer_screen',
      arguments: { workspace, computer: 'desk', ...args },
    })) as CallToolResult;

  beforeAll(async () => {
    if (typeof server === 'string') return;
    const api = createClient({ keyFile: await readKeyFile(server.ownerKeyFile), baseUrl: server.baseUrl });
    await unwrap(api.POST('/workspaces', { body: { name: workspace } }));
    for (const [name, image] of [
      ['desk', 'debian-13-desktop'],
      ['plain', 'debian-13'],
    ]) {
      const created = await unwrap(
        api.POST('/workspaces/{workspace}/computers', {
          params: { path: { workspace } },
          body: { name: name as string, size: 'small', image: image as string },
        }),
      );
      const [done] = await waitForOperations(api, created.operations, { timeoutMs: 60_000 });
      expect(done?.state).toBe('succeeded');
    }
    mcp = new Client({ name: 'screen-test', version: '0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${server.mcpUrl}?toolsets=screens`), {
        requestInit: { headers: { Authorization: `Bearer ${await api.accessToken()}` } },
      }),
    );
    await mcp.listTools(); // caches the output schemas: every structured result is checked from here on
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    if (typeof server !== 'string') await server.close();
  });

  it('is listed in screens with the computer-use actions, and is not read-only', async () => {
    const { tools } = await mcp.listTools();
    const tool = tools.find((t) => t.name === 'use_computer_screen');
    expect((tool?.inputSchema.properties as Json | undefined)?.action.enum).toEqual([
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
    ]);
    expect(tool?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it('answers a screenshot as a PNG image with the screen size and the pointer', async () => {
    const result = await use({ action: 'screenshot' });
    expect(result.isError).toBeFalsy();
    const image = result.content.find((c) => c.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    const bytes = Buffer.from((image as { data: string }).data, 'base64');
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    // The IHDR's width and height: the screen's own, 1280x800 by default.
    expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([1280, 800]);
    expect(result.structuredContent).toMatchObject({
      action: 'screenshot',
      screen: { width: 1280, height: 800 },
    });
  });

  it('scales the picture with max_width and keeps the screen’s size in the answer', async () => {
    const result = await use({ action: 'screenshot', max_width: 640 });
    const image = result.content.find((c) => c.type === 'image') as { data: string };
    const bytes = Buffer.from(image.data, 'base64');
    expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([640, 400]);
    expect(result.structuredContent).toMatchObject({ screen: { width: 1280, height: 800 } });
  });

  it('clicks, moves and drags the pointer where it is sent, and cursor_position reads it back', async () => {
    expect((await use({ action: 'left_click', coordinate: [640, 400] })).structuredContent).toMatchObject({
      cursor: { x: 640, y: 400 },
      simulated: true,
    });
    expect((await use({ action: 'double_click', coordinate: [10, 20] })).structuredContent).toMatchObject({
      cursor: { x: 10, y: 20 },
    });
    await use({ action: 'left_click_drag', start_coordinate: [100, 100], coordinate: [300, 200] });
    const read = await use({ action: 'cursor_position' });
    expect(read.structuredContent).toMatchObject({ action: 'cursor_position', cursor: { x: 300, y: 200 } });
    expect(read.content.some((c) => c.type === 'image')).toBe(false);
  });

  it('types, presses a key, scrolls and waits, with a screenshot after when asked', async () => {
    for (const args of [
      { action: 'type', text: 'hello from an agent' },
      { action: 'key', text: 'ctrl+s' },
      { action: 'scroll', scroll_direction: 'down', scroll_amount: 3 },
      { action: 'wait', duration: 0.1 },
    ])
      expect((await use(args)).isError, JSON.stringify(args)).toBeFalsy();
    const after = await use({
      action: 'mouse_move',
      coordinate: [5, 5],
      screenshot_after: true,
      max_width: 320,
    });
    const image = after.content.find((c) => c.type === 'image') as { data: string };
    expect([...Buffer.from(image.data, 'base64').subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(after.structuredContent).toMatchObject({ cursor: { x: 5, y: 5 }, screen: { width: 1280 } });
  });

  it('refuses a point outside the screen, a missing argument, and a computer without a display', async () => {
    const outside = await use({ action: 'left_click', coordinate: [2000, 10] });
    expect(outside.isError).toBe(true);
    expect((outside.content[0] as { text: string }).text).toMatch(/^Error 400 invalid_argument/);
    const missing = await use({ action: 'type' });
    expect(missing).toMatchObject({ isError: true, content: [{ type: 'text', text: 'type needs `text`.' }] });
    const plain = await mcp.callTool({
      name: 'use_computer_screen',
      arguments: { workspace, computer: 'plain', action: 'screenshot' },
    });
    expect(plain.isError).toBe(true);
    expect(JSON.parse((plain.content as { text: string }[])[1]?.text ?? '{}').error).toMatchObject({
      code: 'invalid_state',
      details: { reason: 'no_display' },
    });
  });
});
