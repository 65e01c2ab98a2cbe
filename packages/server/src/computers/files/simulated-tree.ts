import { type FileStat, type FileType, notFound } from './driver.js';
import { baseName, segmentsOf } from './paths.js';
import { assertLinkHops, assertParentDirectory } from './preconditions.js';

/** A node of a SIMULATED computer's file tree; hard links share one `file` node. */
export type SimNode =
  | { type: 'directory'; mode: number; mtime: Date; children: Map<string, SimNode> }
  | { type: 'file'; mode: number; mtime: Date; data: Uint8Array }
  | { type: 'symlink'; mode: number; mtime: Date; target: string }
  | { type: 'other'; mode: number; mtime: Date };

export type SimDirectory = Extract<SimNode, { type: 'directory' }>;

/** A new directory node. */
export function directory(mode = 0o755): SimDirectory {
  return { type: 'directory', mode, mtime: new Date(), children: new Map() };
}

/**
 * The initial tree of a SIMULATED computer: `/`, `/bin`, `/etc/hostname` (its name), `/home`,
 * `/home/svc`, `/tmp`.
 */
export function initialTree(hostname: string): SimDirectory {
  const root = directory();
  const etc = directory();
  const home = directory();
  const tmp = directory(0o1777);
  root.children.set('bin', directory());
  root.children.set('etc', etc);
  root.children.set('home', home);
  root.children.set('tmp', tmp);
  home.children.set('svc', directory());
  etc.children.set('hostname', {
    type: 'file',
    mode: 0o644,
    mtime: new Date(),
    data: new TextEncoder().encode(`${hostname}\n`),
  });
  return root;
}

/** Where a lookup ended: the node (absent when only the last segment is missing) and its canonical path. */
export interface Resolved {
  node: SimNode | undefined;
  /** The directory holding the last segment, and that segment. */
  parent: SimDirectory;
  name: string;
  /** The path with every symlink resolved, inside the computer. */
  canonical: string;
}

/**
 * Looks up a normalized path in the tree, resolving symlinks INSIDE it (an absolute target restarts at
 * this tree's root, `..` never climbs above it), at most `MAX_SYMLINK_HOPS` of them (preconditions.ts). The last
 * segment is followed when `followLast`. A missing intermediate directory is `not_found`, a file in
 * the middle `not_directory`; a missing last segment gives `node: undefined`.
 */
export function resolvePath(root: SimDirectory, path: string, followLast: boolean): Resolved {
  const pending = segmentsOf(path);
  const stack: { name: string; node: SimDirectory }[] = [];
  let hops = 0;
  const top = (): SimDirectory => stack.at(-1)?.node ?? root;
  const canonical = () => `/${stack.map((entry) => entry.name).join('/')}`;
  if (pending.length === 0) return { node: root, parent: root, name: '/', canonical: '/' };
  while (pending.length > 0) {
    const segment = pending.shift() as string;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      stack.pop();
      continue;
    }
    const dir = top();
    const child = dir.children.get(segment);
    const last = pending.length === 0;
    if (!child) {
      if (last)
        return {
          node: undefined,
          parent: dir,
          name: segment,
          canonical: joinCanonical(canonical(), segment),
        };
      throw notFound(path);
    }
    if (child.type === 'symlink' && (!last || followLast)) {
      assertLinkHops(++hops, path);
      if (child.target.startsWith('/')) stack.length = 0;
      pending.unshift(...child.target.split('/'));
      continue;
    }
    if (last)
      return { node: child, parent: dir, name: segment, canonical: joinCanonical(canonical(), segment) };
    assertParentDirectory(path, child.type);
    stack.push({ name: segment, node: child });
  }
  // The path ended on `..` or a symlink to a directory: the top of the stack is where it leads.
  const node = top();
  const parentStack = stack.slice(0, -1);
  return {
    node,
    parent: parentStack.at(-1)?.node ?? root,
    name: stack.at(-1)?.name ?? '/',
    canonical: canonical(),
  };
}

function joinCanonical(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

/** What stat reports of a node found at `path`. */
export function statOf(node: SimNode, path: string): FileStat {
  const type: FileType = node.type;
  // Directories (and special files) report 0 on every driver: their size says nothing portable.
  const size =
    node.type === 'file' ? node.data.length : node.type === 'symlink' ? Buffer.byteLength(node.target) : 0;
  return {
    path,
    name: baseName(path),
    type,
    size,
    mode: node.mode & 0o777,
    modifiedAt: node.mtime,
    ...(node.type === 'symlink' ? { linkTarget: node.target } : {}),
  };
}

/** Bytes of the regular files under `node` (a hard-linked file counts once). */
export function treeBytes(node: SimNode, seen = new Set<SimNode>()): number {
  if (seen.has(node)) return 0;
  seen.add(node);
  if (node.type === 'file') return node.data.length;
  if (node.type !== 'directory') return 0;
  let total = 0;
  for (const child of node.children.values()) total += treeBytes(child, seen);
  return total;
}

/**
 * A deep copy of `node` (a snapshot's copy of a SIMULATED tree): file bytes are copied, and files
 * hard-linked inside it stay linked to each other in the copy, not to the original.
 */
export function cloneTree<Node extends SimNode>(node: Node, copies = new Map<SimNode, SimNode>()): Node {
  const known = copies.get(node);
  if (known) return known as Node;
  let copy: SimNode;
  switch (node.type) {
    case 'directory': {
      const children = new Map<string, SimNode>();
      copy = { type: 'directory', mode: node.mode, mtime: new Date(node.mtime), children };
      copies.set(node, copy);
      for (const [name, child] of node.children) children.set(name, cloneTree(child, copies));
      return copy as Node;
    }
    case 'file':
      copy = { type: 'file', mode: node.mode, mtime: new Date(node.mtime), data: node.data.slice() };
      break;
    case 'symlink':
      copy = { type: 'symlink', mode: node.mode, mtime: new Date(node.mtime), target: node.target };
      break;
    default:
      copy = { type: 'other', mode: node.mode, mtime: new Date(node.mtime) };
  }
  copies.set(node, copy);
  return copy as Node;
}
