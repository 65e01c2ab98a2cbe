// Toolsets: the groups a client chooses its tools by (`/mcp?toolsets=…`, `svc-mcp --toolsets …`), as
// GitHub's MCP server has them: a documented default set, `all`, and `default` to add to. A toolset is
// the operation's first spec tag, but for three groups an agent working in a computer needs whatever
// their tags are, derived from the operation itself: `terminals` (the operations on a computer's
// terminals), `files` (the operations on a computer's files), `streams` (the operations that answer
// Server-Sent Events) and `screens` (a computer's screen and its input, which an agent that only runs
// commands does without: not in the default set).
import {
  kindBytes,
  listOperations,
  type OpenApiDocument,
  type OperationInfo,
  operationKind,
} from '@svc/contract';

/**
 * The toolset of every operation on a computer's terminals: a path at or beneath a `terminals`
 * collection, their output stream and their input too. Not in the default set: its tools would take
 * the default `tools/list` past its budget; `?toolsets=default,terminals` adds them.
 */
export const TERMINALS_TOOLSET = 'terminals';

/** Whether a path is a terminals collection or beneath one (`…/computers/{computer}/terminals/…`). */
const isTerminalPath = (path: string) => /\/terminals(\/|$)/.test(path);

/** The toolset of every operation that answers Server-Sent Events (`text/event-stream`). */
export const STREAMS_TOOLSET = 'streams';

/**
 * The toolset of every operation on a file's path: the path of an operation that reads or writes a
 * file's bytes (`application/octet-stream`), and the paths beneath it (stat, entries, archives).
 */
export const FILES_TOOLSET = 'files';

/**
 * The toolset of the operations on a computer's screen: the one that answers a picture (`image/png`),
 * and the `input` beside it (`…/{computer}/screen`, `…/{computer}/input`).
 */
export const SCREENS_TOOLSET = 'screens';

/**
 * What `tools/list` holds when a client names no toolset: what an agent working in computers uses.
 * `identity` for `get_me` (who the caller is, and the workspaces it may use: GitHub's default
 * `context` toolset), `catalog` for the size and image names `create_computer` takes.
 */
export const DEFAULT_TOOLSETS: readonly string[] = [
  'identity',
  'computers',
  'files',
  'operations',
  'streams',
  'catalog',
];

/** The words a toolset list may hold besides toolset names. */
export const TOOLSET_KEYWORDS = { all: 'all', default: 'default' } as const;

const FILE_MEDIA_TYPE = 'application/octet-stream';
const fileRootCache = new WeakMap<OpenApiDocument, readonly string[]>();

/** The paths of the operations that read or write a file's bytes. */
function fileRoots(document: OpenApiDocument): readonly string[] {
  let roots = fileRootCache.get(document);
  if (!roots) {
    const paths = listOperations(document)
      .filter((op) => kindBytes(operationKind(document, op))?.body.mediaType === FILE_MEDIA_TYPE)
      .map((op) => op.path);
    roots = [...new Set(paths)];
    fileRootCache.set(document, roots);
  }
  return roots;
}

const screenPathCache = new WeakMap<OpenApiDocument, readonly string[]>();

/** The paths of the operations on a computer's screen: each picture's, and the `input` beside it. */
function screenPaths(document: OpenApiDocument): readonly string[] {
  let paths = screenPathCache.get(document);
  if (!paths) {
    const pictures = listOperations(document)
      .filter((op) => {
        const bytes = kindBytes(operationKind(document, op));
        return bytes?.direction === 'out' && bytes.body.mediaType === 'image/png';
      })
      .map((op) => op.path);
    paths = [...new Set(pictures.flatMap((p) => [p, `${p.slice(0, p.lastIndexOf('/'))}/input`]))];
    screenPathCache.set(document, paths);
  }
  return paths;
}

/**
 * The toolset of an operation's tool: `terminals` for an operation on a computer's terminals, `streams`
 * for a stream, `files` for an operation on a file's path, `screens` for one on a computer's screen,
 * else its first spec tag.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'listComputerFiles')!;
 * toolsetOf(doc, op); // "files"
 */
export function toolsetOf(document: OpenApiDocument, op: OperationInfo): string {
  if (isTerminalPath(op.path)) return TERMINALS_TOOLSET;
  if (operationKind(document, op).kind === 'event-stream') return STREAMS_TOOLSET;
  if (fileRoots(document).some((root) => op.path === root || op.path.startsWith(`${root}/`)))
    return FILES_TOOLSET;
  if (screenPaths(document).includes(op.path)) return SCREENS_TOOLSET;
  return ((op.operation.tags as string[] | undefined) ?? [])[0] ?? 'untagged';
}

/**
 * Reads a toolset list (`computers,webhooks`, `all`, `default,webhooks`): empty is the default set,
 * `all` every toolset, `default` the default set beside the others named. Answers the toolsets in
 * `known`'s order, or the names that are none.
 *
 * @example
 * parseToolsets(['identity', 'computers', 'webhooks'], 'default,webhooks', ['identity', 'computers']);
 * // { ok: true, toolsets: ['identity', 'computers', 'webhooks'] }
 */
export function parseToolsets(
  known: readonly string[],
  text: string | null | undefined,
  defaults: readonly string[] = DEFAULT_TOOLSETS,
): { ok: true; toolsets: string[] } | { ok: false; unknown: string[] } {
  const names = (text ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const wanted = new Set<string>();
  const unknown: string[] = [];
  for (const name of names.length > 0 ? names : [TOOLSET_KEYWORDS.default]) {
    if (name === TOOLSET_KEYWORDS.all) for (const set of known) wanted.add(set);
    else if (name === TOOLSET_KEYWORDS.default) for (const set of defaults) wanted.add(set);
    else if (known.includes(name)) wanted.add(name);
    else unknown.push(name);
  }
  if (unknown.length > 0) return { ok: false, unknown };
  return { ok: true, toolsets: known.filter((set) => wanted.has(set)) };
}
