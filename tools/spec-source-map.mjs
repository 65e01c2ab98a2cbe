// Maps a JSON pointer into the bundled spec back to the file and line a designer edits.
//
// The bundle (`redocly bundle`) is the source tree with every `$ref` to another file either inlined
// or moved under `#/components/<kind>/<name>`. Both keep the source's key structure, so walking the
// pointer's segments through the source tree, and following each `$ref` met on the way into the file
// (and fragment) it names, ends at the node the bundle copied. Nothing here knows the layout of
// spec/openapi.yaml: a path map of Operation files, of Path Item files or of inline operations all
// walk the same way.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';

/**
 * @typedef {object} SourceLocation
 * @property {string} file absolute path of the source file
 * @property {number} line 1-based
 * @property {number} column 1-based
 * @property {boolean} exact false when the pointer ran past what the sources hold (the nearest
 *   enclosing node is returned)
 */

/** Splits `#/a/b~1c` or `/a/b` (RFC 6901) or an array of segments into unescaped segments. */
export function pointerSegments(pointer) {
  if (Array.isArray(pointer)) return pointer.map(String);
  const text = decodeURIComponent(pointer.replace(/^#/, ''));
  if (text === '' || text === '/') return [];
  return text
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** Joins segments into a JSON pointer (`/paths/~1things/get`). */
export function toPointer(segments) {
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/**
 * Source positions of one spec tree, parsed lazily and cached per file.
 *
 * @example
 * const map = new SourceMap('spec/openapi.yaml');
 * map.locate('/components/schemas/Computer/properties/name');
 * // → { file: '/…/spec/components/schemas/Computer.yaml', line: 12, column: 3, exact: true }
 */
export class SourceMap {
  /** @param {string} rootFile the source root (spec/openapi.yaml) */
  constructor(rootFile) {
    this.rootFile = resolve(rootFile);
    /** @type {Map<string, { doc: import('yaml').Document, lines: LineCounter }>} */
    this.files = new Map();
    /** @type {Map<string, string> | undefined} component name → file, for names only the bundle has */
    this.byBaseName = undefined;
  }

  /** Parsed file (cached). */
  load(file) {
    let entry = this.files.get(file);
    if (!entry) {
      const lines = new LineCounter();
      const doc = parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines, uniqueKeys: false });
      entry = { doc, lines };
      this.files.set(file, entry);
    }
    return entry;
  }

  /** 1-based line and column of a node (or of a pair's key) in `file`. */
  position(file, node) {
    const offset = node?.range?.[0] ?? 0;
    const { line, col } = this.load(file).lines.linePos(offset);
    return { file, line, column: col };
  }

  /**
   * Where the bundle's `pointer` comes from in the sources.
   *
   * @param {string | (string | number)[]} pointer JSON pointer (or Spectral path) into the bundle
   * @param {{ onKey?: boolean }} [options] point at the key naming the node (default) or at its value
   * @returns {SourceLocation}
   */
  locate(pointer, { onKey = true } = {}) {
    const segments = pointerSegments(pointer);
    let found = this.walk(this.rootFile, segments);
    if (!found.exact && segments[0] === 'components' && segments.length >= 3) {
      // `redocly bundle` registers a component the root does not list under the referenced file's
      // base name; find that file and walk the rest of the pointer in it.
      const file = this.componentFile(segments[2]);
      if (file) found = this.walk(file, segments.slice(3));
    }
    const here = !onKey && found.exact ? this.position(found.file, found.node) : found.here;
    return { ...here, exact: found.exact };
  }

  /**
   * Walks `segments` from the top of `file`, following every `$ref` on the way (and at the end).
   * @returns {{ file: string, node: unknown, here: { file: string, line: number, column: number }, exact: boolean }}
   */
  walk(file, segments, seen = new Set()) {
    const top = this.load(file).doc.contents;
    let current = { file, node: top, here: this.position(file, top) };
    for (const segment of segments) {
      const target = this.follow(current, seen);
      if (!target) return { ...current, exact: false };
      const next = child(target.node, segment);
      if (!next) return { ...target, exact: false };
      current = { file: target.file, node: next.node, here: this.position(target.file, next.at) };
    }
    const target = this.follow(current, seen);
    return target ? { ...target, exact: true } : { ...current, exact: false };
  }

  /** Follows a `$ref` chain from `current` to the node it names; undefined when a target is missing. */
  follow(current, seen) {
    const ref = refOf(current.node);
    if (ref === undefined) return current;
    const [path, fragment = ''] = ref.split('#');
    const file = path ? resolve(dirname(current.file), decodeURI(path)) : current.file;
    const key = `${file}#${fragment}`;
    if (seen.has(key) || !existsSync(file)) return undefined;
    const found = this.walk(file, pointerSegments(fragment), new Set([...seen, key]));
    return found.exact ? found : undefined;
  }

  /** The file that `redocly bundle` named component `name` after (its base name without extension). */
  componentFile(name) {
    if (!this.byBaseName) {
      this.byBaseName = new Map();
      for (const file of yamlFiles(dirname(this.rootFile))) {
        const base = file
          .split('/')
          .pop()
          .replace(/\.(ya?ml|json)$/, '');
        if (!this.byBaseName.has(base)) this.byBaseName.set(base, file);
      }
    }
    return this.byBaseName.get(name.replace(/-\d+$/, ''));
  }
}

/** The `$ref` string of a mapping node, if it is a Reference. */
function refOf(node) {
  if (!isMap(node)) return undefined;
  const pair = node.items.find((p) => isScalar(p.key) && p.key.value === '$ref');
  return pair && isScalar(pair.value) && typeof pair.value.value === 'string' ? pair.value.value : undefined;
}

/** The child of a mapping or sequence node under `segment`: the node and what to point at. */
function child(node, segment) {
  if (isMap(node)) {
    const pair = node.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === segment);
    if (!pair) return undefined;
    return { node: pair.value, at: pair.key ?? pair.value };
  }
  if (isSeq(node) && /^\d+$/.test(segment)) {
    const item = node.items[Number(segment)];
    return item === undefined ? undefined : { node: item, at: item };
  }
  return undefined;
}

function* yamlFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* yamlFiles(path);
    else if (/\.ya?ml$/.test(entry.name)) yield path;
  }
}
