import { describe, expect, test } from 'vitest';
import { cycleEdges, importCycles, importGraph, importsOf, type ModuleImport } from './support/modules.js';

// Every import between the server's modules counts, `import type` too: a type-only cycle does no harm
// at run time (the import is erased), but it still ties two modules so that neither can be read,
// moved or tested without the other, and it is where a run-time cycle grows from the day someone
// imports a value along the same edge. No exceptions.

const graph = importGraph();

test('no import cycle between server modules (run-time and type imports alike)', () => {
  expect(importCycles(graph).map((cycle) => cycleEdges(graph, cycle))).toEqual([]);
});

describe('the walker', () => {
  test('reads static imports and exports, dynamic import() and type imports', () => {
    const source = `
      import { a } from './a.js';
      import type { B } from '../b.js';
      import { type C } from './c.js';
      export { d } from './d.js';
      export type { E } from './e.js';
      import { readFileSync } from 'node:fs';
      const f = await import('./f.js');
      type G = typeof import('./g.js');
    `;
    expect(importsOf('dir/m.ts', source)).toEqual([
      { to: 'dir/a.ts', kind: 'run' },
      { to: 'b.ts', kind: 'type' },
      // Kept as `import {} from './c.js'` under verbatimModuleSyntax: the module is still loaded.
      { to: 'dir/c.ts', kind: 'run' },
      { to: 'dir/d.ts', kind: 'run' },
      { to: 'dir/e.ts', kind: 'type' },
      { to: 'dir/f.ts', kind: 'run' },
      { to: 'dir/g.ts', kind: 'type' },
    ]);
  });

  test('walks every module of src/', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('computers/render.ts')).toContainEqual({
      to: 'computers/repositories/computers.ts',
      kind: 'type',
    });
  });

  const g = (edges: Record<string, [string, ModuleImport['kind']][]>) =>
    new Map(Object.entries(edges).map(([from, to]) => [from, to.map(([t, kind]) => ({ to: t, kind }))]));

  test.each<[string, { given: Map<string, ModuleImport[]>; want: string[][] }]>([
    ['no cycle', { given: g({ 'a.ts': [['b.ts', 'run']], 'b.ts': [] }), want: [] }],
    [
      'a cycle of three, and a module that only reaches it',
      {
        given: g({
          'a.ts': [['b.ts', 'run']],
          'b.ts': [['c.ts', 'run']],
          'c.ts': [['a.ts', 'run']],
          'd.ts': [['a.ts', 'run']],
        }),
        want: [['a.ts', 'b.ts', 'c.ts']],
      },
    ],
    [
      'a cycle closed by a type import',
      { given: g({ 'a.ts': [['b.ts', 'run']], 'b.ts': [['a.ts', 'type']] }), want: [['a.ts', 'b.ts']] },
    ],
    ['a module importing itself', { given: g({ 'a.ts': [['a.ts', 'run']] }), want: [['a.ts']] }],
    [
      'two separate cycles',
      {
        given: g({
          'a.ts': [['b.ts', 'run']],
          'b.ts': [['a.ts', 'run']],
          'c.ts': [['d.ts', 'type']],
          'd.ts': [['c.ts', 'run']],
        }),
        want: [
          ['a.ts', 'b.ts'],
          ['c.ts', 'd.ts'],
        ],
      },
    ],
  ])('finds %s', (_, { given, want }) => {
    expect(importCycles(given)).toEqual(want);
  });
});
