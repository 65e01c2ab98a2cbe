import { loadDocument } from '@svc/contract';
import { describe, expect, test } from 'vitest';
import { commandTable } from '../../src/spec/commands.js';
import { commandLine, commandOfRoute, inCommandWords, shellWord } from '../../src/spec/routes.js';

const commands = commandTable();
const ROUTE = /\b(GET|PUT|POST|PATCH|DELETE)\s+(\/|…\/)/;

/** Every text of the document (descriptions, summaries, examples' messages) that names a route. */
function textsWithRoutes(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string' && ROUTE.test(value)) out.push(value);
  else if (value && typeof value === 'object')
    for (const item of Object.values(value)) textsWithRoutes(item, out);
  return out;
}

describe('routes named as svc commands', () => {
  test.each<[string, { method: string; path: string; want: string }]>([
    ['a route', { method: 'GET', path: '/sizes', want: 'svc sizes list' }],
    ['a route ending a sentence', { method: 'GET', path: '/images.', want: 'svc images list' }],
    ['its end only', { method: 'GET', path: '…/snapshots', want: 'svc snapshots list <workspace>' }],
    [
      'another parameter name',
      { method: 'GET', path: '/operations/{id}', want: 'svc operations get <operation>' },
    ],
    [
      'an action',
      {
        method: 'POST',
        path: '…/computers/{computer}/start',
        want: 'svc computers start <workspace> <computer>',
      },
    ],
  ])('%s', (_name, { method, path, want }) => {
    const command = commandOfRoute(commands, method, path);
    expect(command && commandLine(command)).toBe(want);
  });

  test('a message of the server: the route becomes the command, with the values known', () => {
    expect(inCommandWords('no size named huge; see GET /sizes', commands)).toBe(
      'no size named huge; see svc sizes list',
    );
    expect(inCommandWords('wait for it (`GET …/snapshots`)', commands, { workspace: 'dev' })).toBe(
      'wait for it (`svc snapshots list dev`)',
    );
  });

  test('every route the spec’s texts name is an operation with a command', () => {
    const texts = textsWithRoutes(loadDocument());
    expect(texts.length).toBeGreaterThan(10);
    for (const text of texts) expect(inCommandWords(text, commands), text).not.toMatch(ROUTE);
  });

  test('help shows the spec’s descriptions with commands, not routes', () => {
    const size = commands
      .find((c) => c.operation.operationId === 'createComputer')
      ?.options.find((o) => o.name === 'size');
    expect(size?.description).toBe('A size name from `svc sizes list`.');
  });

  test.each<[string, string]>([
    ['default', 'default'],
    ['<workspace>', '<workspace>'],
    ['{"a":1}', `'{"a":1}'`],
    ["it's", `'it'\\''s'`],
  ])('a word as typed: %s', (word, want) => {
    expect(shellWord(word)).toBe(want);
  });
});
