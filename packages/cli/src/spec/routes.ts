// The spec's descriptions and the server's messages name operations by route (`GET /sizes`, `POST
// …/computers/{computer}/start`); a person at the command line types `svc` commands. The route is
// mapped to the command of the same operation, from the table that makes the commands (operationCommands).
import type { OperationCommand } from './commands.js';

/** A route as prose writes it: a method, then a path from `/` or from `…/` (its end only); a query is ignored. */
const ROUTE = /\b(GET|PUT|POST|PATCH|DELETE)\s+((?:\/|…\/)[^\s`'"),;?]*)(\?[^\s`'"),;]*)?/g;

const shape = (path: string) => path.replace(/\{[^}]*\}/g, '{}').replace(/\/+$/, '');

/**
 * The command of the operation a route names: `GET /sizes` → `svc sizes list`; a path that starts with
 * `…/` names the operation whose path ends so, when only one does. Path parameters may be named
 * differently (`/operations/{id}`).
 *
 * @example
 * commandOfRoute(commands, 'GET', '…/snapshots'); // the command of listSnapshots
 */
export function commandOfRoute(
  commands: readonly OperationCommand[],
  method: string,
  path: string,
): OperationCommand | undefined {
  const wanted = shape(path.replace(/\.+$/, ''));
  const same = commands.filter((c) => c.operation.method === method.toLowerCase());
  if (!wanted.startsWith('…/')) return same.find((c) => shape(c.operation.path) === wanted);
  const tail = wanted.slice(1);
  const found = same.filter((c) => shape(c.operation.path).endsWith(tail));
  return found.length === 1 ? found[0] : undefined;
}

/**
 * How to type a command: `svc computers start <workspace> <computer>`, with the values known for its
 * positionals filled in (`svc computers start dev box`).
 *
 * @example
 * commandLine(startComputer, { workspace: 'dev' }); // 'svc computers start dev <computer>'
 */
export function commandLine(command: OperationCommand, known: Readonly<Record<string, string>> = {}): string {
  return [
    'svc',
    command.group,
    command.name,
    ...command.positionals.map((p) => shellWord(known[p.name] ?? `<${p.name.replace(/_/g, '-')}>`)),
  ].join(' ');
}

/**
 * A word as a shell reads it back: as it is when it is plain, else in single quotes.
 *
 * @example
 * shellWord('{"a":1}'); // `'{"a":1}'`
 */
export function shellWord(word: string): string {
  if (/^<[\w-]+>$/.test(word) || /^[\w@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * `text` with every route of an operation replaced by its `svc` command (`see GET /sizes` → `see svc
 * sizes list`); routes of no operation are left as they are.
 *
 * @example
 * inCommandWords('no size named huge; see GET /sizes', commands); // 'no size named huge; see svc sizes list'
 */
export function inCommandWords(
  text: string,
  commands: readonly OperationCommand[],
  known: Readonly<Record<string, string>> = {},
): string {
  return text.replace(ROUTE, (route, method: string, path: string) => {
    const trailing = /\.+$/.exec(path)?.[0] ?? '';
    const command = commandOfRoute(commands, method, path);
    return command ? `${commandLine(command, known)}${trailing}` : route;
  });
}

/**
 * The commands of the operations `text` names by route, in the order named.
 *
 * @example
 * commandsNamedIn('A size name from `GET /sizes`.', commands); // [the command of listSizes]
 */
export function commandsNamedIn(text: string, commands: readonly OperationCommand[]): OperationCommand[] {
  return [...text.matchAll(ROUTE)]
    .map(([, method, path]) => commandOfRoute(commands, method as string, path as string))
    .filter((command): command is OperationCommand => command !== undefined);
}
