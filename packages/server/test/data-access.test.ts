import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { importGraph, moduleSource, parseModule, serverModules } from './support/modules.js';

// SQL lives in src/repositories/ (one module per resource; auth/, signin/ and operations/ for theirs)
// and src/db/ (connections and migrations). Every other module of the server reaches the database
// through them: it holds no SQL text and runs no statement of its own. It may open a transaction
// around repository calls (the unit of work is its decision), and it may hand on a statement it was
// given (a view or a decorator of the database: tracing, the rate limiter's client). Handlers do not
// even open a transaction: dispatch runs each in the request's.

/** A statement, wherever it is written: in a string, a template or a comment that quotes one. */
const SQL = /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b/g;

/**
 * The `.query(…)` calls of a module, `file:line: call`, save those that hand on a statement the
 * enclosing function was given (their first argument is, or is a property of, one of its parameters).
 */
function statementsRun(path: string, source = moduleSource(path)): string[] {
  const file = parseModule(path, source);
  const found: string[] = [];
  const visit = (node: ts.Node, given: ReadonlySet<string>): void => {
    let scope = given;
    if (ts.isFunctionLike(node)) {
      const names = new Set(given);
      const bind = (name: ts.BindingName): void => {
        if (ts.isIdentifier(name)) names.add(name.text);
        else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name);
      };
      for (const parameter of node.parameters) bind(parameter.name);
      scope = names;
    }
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'query' &&
      !handsOn(node.arguments[0], scope)
    ) {
      const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
      found.push(`${path}:${line}: ${node.getText(file).replace(/\s+/g, ' ').slice(0, 80)}`);
    }
    ts.forEachChild(node, (child) => visit(child, scope));
  };
  visit(file, new Set());
  return found;
}

/** Whether `argument` is a parameter in scope, or a property of one (`q.text`). */
function handsOn(argument: ts.Expression | undefined, parameters: ReadonlySet<string>): boolean {
  let root = argument;
  while (root && ts.isPropertyAccessExpression(root)) root = root.expression;
  return root !== undefined && ts.isIdentifier(root) && parameters.has(root.text);
}

/** The `.transaction(…)` calls of a module. */
const transactions = (source: string) => source.match(/\.transaction\s*[<(]/g) ?? [];

// A feature folder keeps its SQL in its own `repository.ts` (terminals/): the same rule, in its place.
const outside = serverModules().filter(
  (path) => !/^(repositories|db)\//.test(path) && !/^[a-z-]+\/repository\.ts$/.test(path),
);

test('the modules outside repositories/ and db/ are all here', () => {
  expect(outside.length).toBeGreaterThan(80);
  expect(outside).toEqual(
    expect.arrayContaining(['access.ts', 'handlers/computers.ts', 'operations/worker.ts']),
  );
});

test.each(outside)('%s holds no SQL and runs no statement of its own', (path) => {
  expect(moduleSource(path).match(SQL) ?? []).toEqual([]);
  expect(statementsRun(path)).toEqual([]);
});

test.each(outside.filter((path) => path.startsWith('handlers/')))('%s opens no transaction', (path) => {
  expect(transactions(moduleSource(path))).toEqual([]);
});

// States, transitions and rendering are pure: nothing they load at run time, however indirectly, is a
// module that reaches the database.
const PURE = ['operations/states.ts', 'operations/transitions.ts', 'render.ts', 'roles.ts'];

test.each(PURE)('%s loads no module of repositories/ or db/, however indirectly', (path) => {
  const graph = importGraph();
  const loaded = new Set<string>();
  const load = (module: string): void => {
    for (const { to, kind } of graph.get(module) ?? [])
      if (kind === 'run' && !loaded.has(to)) {
        loaded.add(to);
        load(to);
      }
  };
  load(path);
  expect([...loaded].filter((module) => /^(repositories|db)\//.test(module))).toEqual([]);
});

describe('the checks', () => {
  test.each<[string, { given: string; want: { sql: number; run: number } }]>([
    ['a statement run', { given: "await db.query('SELECT 1 FROM keys');", want: { sql: 1, run: 1 } }],
    [
      'a typed one',
      { given: 'await tx.query<Row>(`UPDATE keys SET state = $1`, [s]);', want: { sql: 1, run: 1 } },
    ],
    [
      'one kept in a constant',
      { given: 'const Q = `DELETE FROM keys`; await db.query(Q);', want: { sql: 1, run: 1 } },
    ],
    ['one quoted in a comment', { given: '// then INSERT INTO keys', want: { sql: 1, run: 0 } }],
    [
      'a statement handed on',
      { given: 'const view = { query: (sql, params) => db.query(sql, params) };', want: { sql: 0, run: 0 } },
    ],
    [
      'one handed on from a field',
      { given: 'const c = { query: (q) => db.query(q.text, q.values) };', want: { sql: 0, run: 0 } },
    ],
    [
      'one handed on from an outer function',
      { given: 'function f(sql) { return span(() => db.query(sql)); }', want: { sql: 0, run: 0 } },
    ],
    ['a repository call', { given: 'await lockComputer(tx, id);', want: { sql: 0, run: 0 } }],
  ])('find %s', (_, { given, want }) => {
    expect({ sql: (given.match(SQL) ?? []).length, run: statementsRun('x.ts', given).length }).toEqual(want);
  });

  test('find a transaction a handler opens', () => {
    expect(transactions('await ctx.deps.db.transaction(async (tx) => {});')).toHaveLength(1);
  });
});
