import type { OpenApiDocument, OperationId } from '@svc/contract';
import { listOperations } from '@svc/contract';

/** What the router found for one request line. */
export type RouteResult =
  | { kind: 'match'; operationId: OperationId; pathParams: Record<string, string>; head: boolean }
  /** No spec path has this shape: `404 not_found`. */
  | { kind: 'not_found' }
  /** The path exists but not with this method: `405 method_not_allowed` with `Allow: allow.join(', ')`. */
  | { kind: 'method_not_allowed'; allow: readonly string[] }
  /**
   * The path matched but a parameter segment holds a malformed percent-escape (`%zz`, a lone `%`,
   * invalid UTF-8): `400 invalid_argument` with `field` (e.g. `path.workspace`) as the violation.
   */
  | { kind: 'malformed_path'; operationId: OperationId; field: string };

/** A router compiled from the bundled document. */
export interface Router {
  /**
   * Matches an upper-case method and a path below `/v1` (see `apiPath` in `path.ts`) as it came off
   * the wire (still percent-encoded).
   */
  match(method: string, path: string): RouteResult;
  /** The `Allow` list of a path, or `undefined` when no spec path has that shape (used by CORS preflight). */
  allowed(path: string): readonly string[] | undefined;
}

interface Leaf {
  /** Upper-case method → operation; HEAD is not stored, it falls back to GET (RFC 9110 §9.3.2). */
  methods: Map<string, { operationId: OperationId; paramNames: readonly string[] }>;
  allow: readonly string[];
}

interface Node {
  statics: Map<string, Node>;
  param: Node | undefined;
  leaf: Leaf | undefined;
}

const newNode = (): Node => ({ statics: new Map(), param: undefined, leaf: undefined });

/**
 * Compiles the spec's paths into a segment trie, once at start-up. Matching walks one trie node per
 * segment (static children before the parameter child, with backtracking), so the cost does not grow
 * with the number of routes and no regular expression runs per request.
 *
 * Decisions: it matches the spec's own paths, relative to the `/v1` prefix that `apiPath` strips once
 * per request; matching is exact and case-sensitive (a trailing slash or an empty segment is a
 * different, unknown path); static segments are compared still encoded (`/%77orkspaces` is unknown); parameter segments are percent-decoded after the
 * match. `HEAD` is answered by the `GET` operation; `Allow` lists the spec's methods, `HEAD` when
 * there is a `GET`, and `OPTIONS` (CORS preflight is answered on every known path).
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const router = compileRouter(loadDocument());
 * const found = router.match('GET', '/workspaces/acme-dev');
 * // { kind: 'match', operationId: 'getWorkspace', pathParams: { workspace: 'acme-dev' }, head: false }
 */
export function compileRouter(document: OpenApiDocument): Router {
  const root = newNode();
  for (const op of listOperations(document)) {
    let node = root;
    const paramNames: string[] = [];
    for (const segment of op.path.split('/').slice(1)) {
      const param = /^\{([^}]+)\}$/.exec(segment)?.[1];
      if (param !== undefined) {
        paramNames.push(param);
        node.param ??= newNode();
        node = node.param;
      } else {
        const next = node.statics.get(segment) ?? newNode();
        node.statics.set(segment, next);
        node = next;
      }
    }
    node.leaf ??= { methods: new Map(), allow: [] };
    const method = op.method.toUpperCase();
    if (node.leaf.methods.has(method)) throw new Error(`two operations for ${method} ${op.path}`);
    node.leaf.methods.set(method, { operationId: op.operationId as OperationId, paramNames });
  }
  finishLeaves(root);

  // `/a/b`.split('/') is ['', 'a', 'b']: the walk starts at the first segment, index 1.
  const find = (path: string, values: string[]): Leaf | undefined =>
    path.startsWith('/') ? walk(root, path.split('/'), 1, values) : undefined;

  return {
    match(method, path) {
      const values: string[] = [];
      const leaf = find(path, values);
      if (!leaf) return { kind: 'not_found' };
      const head = method === 'HEAD';
      const route = leaf.methods.get(head ? 'GET' : method);
      if (!route) return { kind: 'method_not_allowed', allow: leaf.allow };
      const pathParams: Record<string, string> = {};
      for (let i = 0; i < route.paramNames.length; i++) {
        const name = route.paramNames[i] as string;
        const decoded = decodeSegment(values[i] as string);
        if (decoded === undefined)
          return { kind: 'malformed_path', operationId: route.operationId, field: `path.${name}` };
        pathParams[name] = decoded;
      }
      return { kind: 'match', operationId: route.operationId, pathParams, head };
    },
    allowed(path) {
      return find(path, [])?.allow;
    },
  };
}

function finishLeaves(node: Node): void {
  if (node.leaf) {
    const methods = [...node.leaf.methods.keys()];
    if (methods.includes('GET')) methods.push('HEAD');
    methods.push('OPTIONS');
    node.leaf.allow = Object.freeze(methods);
  }
  for (const child of node.statics.values()) finishLeaves(child);
  if (node.param) finishLeaves(node.param);
}

/** Depth-first: a static child wins over the parameter child, and we back off if it leads nowhere. */
function walk(node: Node, segments: string[], index: number, values: string[]): Leaf | undefined {
  if (index === segments.length) return node.leaf;
  const segment = segments[index] as string;
  const child = node.statics.get(segment);
  if (child) {
    const found = walk(child, segments, index + 1, values);
    if (found) return found;
  }
  if (node.param && segment !== '') {
    values.push(segment);
    const found = walk(node.param, segments, index + 1, values);
    if (found) return found;
    values.pop();
  }
  return undefined;
}

function decodeSegment(raw: string): string | undefined {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
