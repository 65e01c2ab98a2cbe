import { readdirSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { folderGraph, folderRules, forbiddenImports, rulesGraph, writtenRules } from './support/layers.js';
import { cycleEdges, importCycles, importGraph, type ModuleImport } from './support/modules.js';

// The folders of src/ are layers, written down once in ARCHITECTURE.md: which folder may import which.
// Type imports count as much as any (see import-cycles.test.ts for why).

const graph = importGraph();
const rules = writtenRules();

test('every folder of src/ has a rule, and every rule a folder', () => {
  const folders = readdirSync(new URL('../src/', import.meta.url), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  expect([...rules.keys()].sort()).toEqual(['.', ...folders].sort());
});

test('the rules allow no loop between folders', () => {
  const allowed = rulesGraph(rules);
  expect(importCycles(allowed).map((cycle) => cycleEdges(allowed, cycle))).toEqual([]);
});

test('every import between folders is one the rules allow', () => {
  expect(forbiddenImports(graph, rules)).toEqual([]);
});

test('no loop between folders', () => {
  const folders = folderGraph(graph);
  expect(importCycles(folders).map((cycle) => cycleEdges(folders, cycle))).toEqual([]);
});

describe('the checks', () => {
  const g = (edges: Record<string, [string, ModuleImport['kind']][]>) =>
    new Map(Object.entries(edges).map(([from, to]) => [from, to.map(([t, kind]) => ({ to: t, kind }))]));
  const table =
    '| folder | may import | why |\n|---|---|---|\n| `a` | `b` | a uses b |\n| `b` | — | b is alone |\n';

  test('read the table', () => {
    expect(folderRules(table)).toEqual(
      new Map([
        ['a', new Set(['b'])],
        ['b', new Set()],
      ]),
    );
  });

  test.each<
    [string, { given: Map<string, ModuleImport[]>; want: { forbidden: string[]; loops: string[][] } }]
  >([
    [
      'imports the rules allow',
      {
        given: g({
          'a/x.ts': [
            ['b/y.ts', 'run'],
            ['a/z.ts', 'run'],
          ],
          'a/z.ts': [],
          'b/y.ts': [],
        }),
        want: { forbidden: [], loops: [] },
      },
    ],
    [
      'a planted loop: b imports a back (a type import is enough)',
      {
        given: g({ 'a/x.ts': [['b/y.ts', 'run']], 'b/y.ts': [['a/x.ts', 'type']] }),
        want: { forbidden: ['b/y.ts → a/x.ts (type)'], loops: [['a', 'b']] },
      },
    ],
    [
      'a folder without a rule',
      {
        given: g({ 'c/w.ts': [['b/y.ts', 'run']], 'b/y.ts': [] }),
        want: { forbidden: ['c/w.ts: folder c has no rule'], loops: [] },
      },
    ],
  ])('find %s', (_, { given, want }) => {
    expect(forbiddenImports(given, folderRules(table))).toEqual(want.forbidden);
    expect(importCycles(folderGraph(given))).toEqual(want.loops);
  });

  test('a table that allows a loop is refused', () => {
    const loop = folderRules(
      `${table}| \`c\` | \`a\` | c uses a |\n`.replace('| `b` | — |', '| `b` | `c` |'),
    );
    expect(importCycles(rulesGraph(loop))).toEqual([['a', 'b', 'c']]);
  });
});
