// `svc computers input`'s words (commands/screen.ts): each action as the API's, chained with or
// without `then`, and the usage error of a word it cannot read.
import { describe, expect, it } from 'vitest';
import { parseInputWords } from '../../src/commands/screen.js';
import { run } from '../../src/program.js';

describe('parseInputWords', () => {
  it.each([
    ['click at a point', { given: 'click 640 400', want: [{ type: 'click', x: 640, y: 400 }] }],
    ['click where the pointer is', { given: 'click', want: [{ type: 'click' }] }],
    ['right-click', { given: 'right-click 1 2', want: [{ type: 'click', button: 'right', x: 1, y: 2 }] }],
    ['double-click', { given: 'double-click 3 4', want: [{ type: 'click', count: 2, x: 3, y: 4 }] }],
    ['move', { given: 'move 5 6', want: [{ type: 'move', x: 5, y: 6 }] }],
    ['drag', { given: 'drag 1 2 30 40', want: [{ type: 'drag', x: 1, y: 2, to_x: 30, to_y: 40 }] }],
    ['scroll down 3', { given: 'scroll down 3', want: [{ type: 'scroll', delta_y: 3 }] }],
    ['scroll up by default 3', { given: 'scroll up', want: [{ type: 'scroll', delta_y: -3 }] }],
    ['scroll left 2', { given: 'scroll left 2', want: [{ type: 'scroll', delta_x: -2 }] }],
    ['key', { given: 'key ctrl+s', want: [{ type: 'key', keys: 'ctrl+s' }] }],
    ['wait', { given: 'wait 500', want: [{ type: 'wait', milliseconds: 500 }] }],
    [
      'a chain with then, and without',
      {
        given: 'click 10 20 then key Return wait 100',
        want: [
          { type: 'click', x: 10, y: 20 },
          { type: 'key', keys: 'Return' },
          { type: 'wait', milliseconds: 100 },
        ],
      },
    ],
  ])('%s', (_, { given, want }) => {
    expect(parseInputWords(given.split(' '))).toEqual(want);
  });

  it('types a text as one word, even one that reads as an action', () => {
    expect(parseInputWords(['type', 'hello world', 'then', 'type', 'then'])).toEqual([
      { type: 'type', text: 'hello world' },
      { type: 'type', text: 'then' },
    ]);
  });

  it.each([
    ['an unknown action', ['jump'], 'unknown_action'],
    ['move without numbers', ['move', '5'], 'bad_action'],
    ['drag with a word', ['drag', '1', '2', 'x', '4'], 'bad_action'],
    ['scroll without a direction', ['scroll', '3'], 'bad_action'],
    ['type without a text', ['type'], 'bad_action'],
  ])('refuses %s as a usage error', (_, words, code) => {
    expect(() => parseInputWords(words)).toThrow(expect.objectContaining({ exit: 'usage', code }));
  });
});

describe('svc computers input: an action that failed in the computer', () => {
  it('prints the pointer, names the action by its number and what the computer said, and exits 1', async () => {
    const sent: unknown[] = [];
    let stdout = '';
    let stderr = '';
    const code = await run(
      ['computers', 'input', 'dev', 'desk', 'click', '40', '780', 'then', 'key', 'ctrl+sss'],
      {
        env: { SVC_BASE_URL: 'http://api.test/v1', SVC_ACCESS_TOKEN: 'token' },
        isTTY: false,
        fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
          const request = new Request(input, init);
          sent.push(await request.json());
          return Response.json({
            input: {
              applied: 1,
              cursor: { x: 40, y: 780 },
              failed: { index: 1, message: "(symbol) No such key name 'ctrl+sss'" },
            },
          });
        },
        stdout: { write: (text: string | Uint8Array) => (stdout += text.toString()) },
        stderr: { write: (text: string | Uint8Array) => (stderr += text.toString()) },
      },
    );
    expect(sent).toEqual([
      {
        actions: [
          { type: 'click', x: 40, y: 780 },
          { type: 'key', keys: 'ctrl+sss' },
        ],
      },
    ]);
    expect(stdout).toBe('pointer at 40,780\n');
    expect(stderr).toBe(
      "error: action 2 (key) failed: (symbol) No such key name 'ctrl+sss'; 1 applied before it\n  code: action_failed\n",
    );
    expect(code).toBe(1);
  });
});
