import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import ts from 'typescript';

/** The server's source directory. */
const SRC = new URL('../../src/', import.meta.url);

/**
 * Every module of the server: `src/**\/*.ts` as paths relative to `src/` (`access.ts`,
 * `repositories/auth/refresh-tokens.ts`), sorted.
 *
 * @example
 * serverModules().filter((path) => path.startsWith('handlers/'));
 */
export function serverModules(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))
    .sort();
}

/** The text of a module (a path from {@link serverModules}). */
export function moduleSource(path: string): string {
  return readFileSync(new URL(path, SRC), 'utf8');
}

/** A module parsed by TypeScript (syntax only: no program, no type checking). */
export function parseModule(path: string, source = moduleSource(path)): ts.SourceFile {
  return ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
}

/**
 * One import of a module: `type` when it is erased at run time (`import type`, `export type … from`,
 * an `import('…')` type), `run` otherwise (a static `import` or `export … from`, a dynamic `import()`).
 */
export interface ModuleImport {
  to: string;
  kind: 'run' | 'type';
}

/**
 * What a module imports of its siblings: relative specifiers resolved against `path` to module paths
 * (`./x.js` is `x.ts`), packages left out.
 *
 * @example
 * importsOf('auth/grants.ts', "import { newId } from '../ids.js';"); // [{ to: 'ids.ts', kind: 'run' }]
 */
export function importsOf(path: string, source: string): ModuleImport[] {
  const imports: ModuleImport[] = [];
  const add = (specifier: string, kind: ModuleImport['kind']) => {
    if (specifier.startsWith('.'))
      imports.push({ to: posix.join(posix.dirname(path), specifier).replace(/\.js$/, '.ts'), kind });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier))
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly ? 'type' : 'run');
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      add(node.moduleSpecifier.text, node.isTypeOnly ? 'type' : 'run');
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      add(node.arguments[0].text, 'run');
    else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    )
      add(node.argument.literal.text, 'type');
    ts.forEachChild(node, visit);
  };
  visit(parseModule(path, source));
  return imports;
}

/**
 * What each server module imports of the others ({@link importsOf} over {@link serverModules}).
 *
 * @example
 * importGraph().get('access.ts'); // [{ to: 'errors.ts', kind: 'run' }, …]
 */
export function importGraph(): Map<string, ModuleImport[]> {
  const modules = serverModules();
  const known = new Set(modules);
  const graph = new Map<string, ModuleImport[]>();
  for (const path of modules) {
    const imports = importsOf(path, moduleSource(path));
    for (const { to } of imports)
      if (!known.has(to)) throw new Error(`${path} imports ${to}, which is no module of src/`);
    graph.set(path, imports);
  }
  return graph;
}

/**
 * The import cycles of a graph: its strongly connected components of more than one module (or of one
 * module importing itself), each sorted, in a stable order (Tarjan's algorithm).
 *
 * @example
 * importCycles(new Map([['a.ts', [{ to: 'b.ts', kind: 'run' }]], ['b.ts', [{ to: 'a.ts', kind: 'type' }]]]));
 * // [['a.ts', 'b.ts']]
 */
export function importCycles(graph: ReadonlyMap<string, readonly ModuleImport[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (module: string): void => {
    index.set(module, index.size);
    low.set(module, index.get(module) as number);
    stack.push(module);
    onStack.add(module);
    for (const { to } of graph.get(module) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(module, Math.min(low.get(module) as number, low.get(to) as number));
      } else if (onStack.has(to)) {
        low.set(module, Math.min(low.get(module) as number, index.get(to) as number));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    const selfImport = (graph.get(module) ?? []).some(({ to }) => to === module);
    if (component.length > 1 || selfImport) cycles.push(component.sort());
  };
  for (const module of [...graph.keys()].sort()) if (!index.has(module)) connect(module);
  return cycles.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

/**
 * The imports that close a cycle, one line each (`a.ts → b.ts (type)`): what a failing test shows.
 *
 * @example
 * cycleEdges(graph, ['a.ts', 'b.ts']); // ['a.ts → b.ts', 'b.ts → a.ts (type)']
 */
export function cycleEdges(graph: ReadonlyMap<string, readonly ModuleImport[]>, cycle: string[]): string[] {
  const inCycle = new Set(cycle);
  return cycle.flatMap((from) =>
    (graph.get(from) ?? [])
      .filter(({ to }) => inCycle.has(to))
      .map(({ to, kind }) => `${from} → ${to}${kind === 'type' ? ' (type)' : ''}`),
  );
}
