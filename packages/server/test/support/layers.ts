import { readFileSync } from 'node:fs';
import type { ModuleImport } from './modules.js';

/** The server's folder rules: `packages/server/ARCHITECTURE.md`. */
export const ARCHITECTURE = new URL('../../ARCHITECTURE.md', import.meta.url);

/**
 * The folder of `src/` a module belongs to: its first path segment, or `.` for a module in `src/` itself.
 *
 * @example
 * folderOf('computers/docker/agent.ts'); // 'computers'
 */
export function folderOf(module: string): string {
  const slash = module.indexOf('/');
  return slash === -1 ? '.' : module.slice(0, slash);
}

/**
 * The table "Which folder may import which" of the architecture document: each folder and the folders
 * it may import (`—` for none).
 *
 * @example
 * folderRules('| `a` | `b`, `c` | why |\n| `b` | — | why |'); // Map { 'a' => Set {'b', 'c'}, 'b' => Set {} }
 */
export function folderRules(markdown: string): Map<string, Set<string>> {
  const rules = new Map<string, Set<string>>();
  for (const line of markdown.split('\n')) {
    const row = /^\| `([^`]+)` \| ([^|]+) \|/.exec(line);
    if (!row) continue;
    const [, folder, allowed] = row as unknown as [string, string, string];
    if (rules.has(folder)) throw new Error(`folder ${folder} has two rows`);
    rules.set(folder, new Set([...allowed.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string)));
  }
  return rules;
}

/** The rules of {@link ARCHITECTURE}. */
export function writtenRules(): Map<string, Set<string>> {
  return folderRules(readFileSync(ARCHITECTURE, 'utf8'));
}

/**
 * The folder graph of a module graph: which folder imports which (`run` when any of the imports loads
 * the module at run time), imports inside a folder left out.
 */
export function folderGraph(
  graph: ReadonlyMap<string, readonly ModuleImport[]>,
): Map<string, ModuleImport[]> {
  const folders = new Map<string, Map<string, ModuleImport['kind']>>();
  for (const [from, imports] of graph) {
    const edges = folders.get(folderOf(from)) ?? new Map<string, ModuleImport['kind']>();
    folders.set(folderOf(from), edges);
    for (const { to, kind } of imports) {
      const folder = folderOf(to);
      if (folder === folderOf(from)) continue;
      edges.set(folder, edges.get(folder) === 'run' ? 'run' : kind);
    }
  }
  return new Map(
    [...folders].map(([from, edges]) => [from, [...edges].sort().map(([to, kind]) => ({ to, kind }))]),
  );
}

/**
 * The imports the rules do not allow, one line each (`fleet/drain.ts → handlers/types.ts (type)`), and
 * the folders that have no rule (`compose/x.ts: folder nowhere has no rule`).
 *
 * @example
 * forbiddenImports(graph, writtenRules()); // [] when the code keeps to the table
 */
export function forbiddenImports(
  graph: ReadonlyMap<string, readonly ModuleImport[]>,
  rules: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const found: string[] = [];
  for (const [from, imports] of graph) {
    const allowed = rules.get(folderOf(from));
    if (!allowed) {
      found.push(`${from}: folder ${folderOf(from)} has no rule`);
      continue;
    }
    for (const { to, kind } of imports)
      if (folderOf(to) !== folderOf(from) && !allowed.has(folderOf(to)))
        found.push(`${from} → ${to}${kind === 'type' ? ' (type)' : ''}`);
  }
  return found;
}

/** The rules as a graph, each allowed import an edge: what `importCycles` checks for a loop. */
export function rulesGraph(rules: ReadonlyMap<string, ReadonlySet<string>>): Map<string, ModuleImport[]> {
  return new Map(
    [...rules].map(([from, to]) => [from, [...to].map((t) => ({ to: t, kind: 'run' as const }))]),
  );
}
