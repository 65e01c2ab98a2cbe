// The terminal tools, over streamable HTTP (official SDK client) against a fake of the terminal
// endpoints (@svc/tools/fake-terminals, a simulated line discipline): an agent opens a terminal, types
// text and named keys, reads the screen as text after the output settles, and sees the exit code.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type FakeTerminals, startFakeTerminals } from '@svc/tools/fake-terminals';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpHttpHandler } from '../src/http.js';
import { keysToBytes, screenText } from '../src/terminal-tools.js';
import { serve } from './support/serve.js';

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');

describe('keysToBytes', () => {
  it.each([
    ['text as typed', { given: 'ls -la', want: 'ls -la' }],
    ['Enter', { given: 'print(6*7)<Enter>', want: 'print(6*7)\r' }],
    ['vim: Escape, a command, Enter', { given: '<Esc>:wq<Enter>', want: '\x1b:wq\r' }],
    ['control keys, any spelling', { given: '<C-c><Ctrl-d><^Z><ctrl+[>', want: '\x03\x04\x1a\x1b' }],
    [
      'arrows and function keys',
      { given: '<Up><Down><Left><Right><F1><F5>', want: '\x1b[A\x1b[B\x1b[D\x1b[C\x1bOP\x1b[15~' },
    ],
    ['a word that names no key stays', { given: '<div>a</div>', want: '<div>a</div>' }],
    ['<lt> types a <', { given: '<lt>Enter>', want: '<Enter>' }],
    ['UTF-8 text', { given: 'é€<Tab>', want: Buffer.from('é€\t').toString('latin1') }],
  ])('%s', (_, { given, want }) => {
    expect(latin1(keysToBytes(given))).toBe(want);
  });
});

describe('screenText', () => {
  it('says the size and the cursor from 1, then the rows, counting the empty ones below', () => {
    expect(
      screenText({ cols: 80, rows: 4, lines: ['$ echo hi', 'hi', '$', ''], cursor: { x: 2, y: 2 } }),
    ).toBe('Screen 80x4, cursor at row 3, column 3 (from 1):\n$ echo hi\nhi\n$\n(1 empty row below)');
  });
});

describe('terminal tools over streamable HTTP', () => {
  let fake: FakeTerminals;
  let client: Client;
  let close: () => Promise<void>;

  beforeAll(async () => {
    fake = await startFakeTerminals();
    const server = await serve(createMcpHttpHandler({ apiBaseUrl: fake.baseUrl }));
    close = server.close;
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?toolsets=terminals`), {
      requestInit: { headers: { Authorization: 'Bearer at' } },
    });
    client = new Client({ name: 'terminal-tools-test', version: '0.0.0' });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await close?.();
    await fake?.close();
  });

  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (result: CallToolResult) =>
    result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

  it('lists the keys tool and the screen tool, titled by their verbs, saying how they answer', async () => {
    const { tools } = await client.listTools();
    const keys = tools.find((t) => t.name === 'send_computer_terminal_input');
    expect(keys?.title).toBe('Send keystrokes to a terminal');
    expect(keys?.description).toContain('named keys in angle brackets');
    expect(keys?.annotations).toMatchObject({
      readOnlyHint: false,
      idempotentHint: false,
    });
    expect(Object.keys(keys?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['workspace', 'computer', 'terminal', 'keys', 'settle_ms']),
    );
    expect(keys?.inputSchema.properties).not.toHaveProperty('body');
    const screen = tools.find((t) => t.name === 'get_computer_terminal_screen');
    expect(screen?.title).toBe("Read a terminal's screen as text");
    expect(screen?.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.map((t) => t.name)).toContain('create_computer_terminal');
  });

  it('opens a terminal, types, reads the settled screen as text, and sees the exit code', async () => {
    const opened = await call('create_computer_terminal', {
      workspace: 'dev',
      computer: 'box',
      cols: 40,
      rows: 5,
    });
    expect(opened.isError).toBeFalsy();
    const id = (opened.structuredContent as { terminal: { id: string } }).terminal.id;
    const where = { workspace: 'dev', computer: 'box', terminal: id };

    const typed = await call('send_computer_terminal_input', {
      ...where,
      keys: 'echo hi<Enter>',
      settle_ms: 100,
    });
    expect(typed.isError).toBeFalsy();
    expect(text(typed)).toContain('Screen 40x5, cursor at row 3, column 3 (from 1):\n$ echo hi\nhi\n$');
    expect(typed.structuredContent).toMatchObject({
      sent_bytes: 8,
      state: 'open',
      screen: { lines: ['$ echo hi', 'hi', '$', '', ''], cursor: { x: 2, y: 2 } },
    });
    // Named keys become their bytes: Ctrl-C reaches the program.
    await call('send_computer_terminal_input', { ...where, keys: 'sleep<C-c>', settle_ms: 0 });
    const input = fake.requests
      .filter((r) => r.path.endsWith('/input'))
      .map((r) => r.body.toString('latin1'));
    expect(input).toEqual(['echo hi\r', 'sleep\x03']);

    const screen = await call('get_computer_terminal_screen', where);
    expect(text(screen)).toBe(
      'Screen 40x5, cursor at row 4, column 3 (from 1):\n$ echo hi\nhi\n$ sleep^C\n$\n(1 empty row below)',
    );
    expect(screen.structuredContent).toMatchObject({ screen: { cols: 40, rows: 5 } });

    const exited = await call('send_computer_terminal_input', {
      ...where,
      keys: 'exit 3<Enter>',
      settle_ms: 50,
    });
    expect(exited.structuredContent).toMatchObject({ state: 'closed', exit_code: 3 });
    expect(text(exited)).toContain('The terminal is closed, exit code 3.');
    // Typing into a closed terminal is the API's refusal, as an error result.
    const refused = await call('send_computer_terminal_input', { ...where, keys: 'x' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('invalid_state');
  });
});
