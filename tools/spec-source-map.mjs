// Maps a JSON pointer into the bundled spec back to the file and line a designer edits.
//
// The bundle (`redocly bundle`) is the source tree with every `$ref` to another file either inlined
// or moved under `#/components/<kind>/<name>`. Both keep the source's key structure, so walking the
// pointer's segments through the source tree, and following each `$ref` met on the way into the file
// (and fragment) it names, ends at the node the bundle copied. Nothing here knows the layout of
// spec/openapi.yaml: a path map of Operation files, of Path Item files or of inline operations all
// walk the same way.
//
// A pointer that ends on a `$ref` (a property, parameter, response, request body, items or Path Item
// written `{$ref: …}`) stops at that `$ref`, in the file that holds it: a finding there is about the
// place that names the target (`fooBar: {$ref: ./Timestamp.yaml}` is a camelCase property of the
// file being edited), not about Timestamp.yaml. Only the entries of a `components` map are followed to
// the end, as is a file that is nothing but a `$ref`: they name a target, they do not use it.
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
 * @property {string} [pointer] JSON pointer of that node inside `file` (of the `$ref` node when the
 *   pointer ended on a `$ref`)
 * @property {{ file: string, line: number, column: number }} [refersTo] when the pointer ended on a
 *   `$ref`: where the node it names is written
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
    /** @type {Map<string, RefSite[]> | undefined} `file#pointer` of a target → the `$ref`s naming it */
    this.refSites = undefined;
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
    let found = this.walk(this.rootFile, segments, { atRef: true });
    if (!found.exact && segments[0] === 'components' && segments.length >= 3) {
      // `redocly bundle` registers a component the root does not list under the referenced file's
      // base name; find that file and walk the rest of the pointer in it.
      const file = this.componentFile(segments[2]);
      if (file) found = this.walk(file, segments.slice(3), { atRef: true });
    }
    // A `$ref` is shown at its `$ref` key either way: the key naming it may be a line above.
    const here =
      !onKey && found.exact && !found.refersTo ? this.position(found.file, found.node) : found.here;
    const refersTo = found.refersTo && { refersTo: found.refersTo };
    return { ...here, exact: found.exact, pointer: toPointer(found.at), ...refersTo };
  }

  /**
   * Walks `segments` from the top of `file`, following every `$ref` on the way, and at the end unless
   * `atRef` asks to stop on a `$ref` that uses its target (see the top of this file).
   * @returns {{ file: string, node: unknown, at: string[], here: { file: string, line: number, column: number }, exact: boolean, refersTo?: { file: string, line: number, column: number } }}
   */
  walk(file, segments, { atRef = false, seen = new Set() } = {}) {
    const top = this.load(file).doc.contents;
    let current = { file, node: top, at: [], here: this.position(file, top) };
    for (const segment of segments) {
      const target = this.follow(current, seen);
      if (!target) return { ...current, exact: false };
      const next = child(target.node, segment);
      if (!next) return { ...target, exact: false };
      const here = this.position(target.file, next.at);
      current = { file: target.file, node: next.node, at: [...target.at, segment], here };
    }
    const site = atRef ? this.refSite(current.file, current.node, current.at) : undefined;
    const target = this.follow(current, seen);
    if (site && !site.alias) {
      const refersTo = target && {
        file: target.here.file,
        line: target.here.line,
        column: target.here.column,
      };
      return { ...current, here: site.here, exact: true, refersTo };
    }
    return target ? { ...target, exact: true } : { ...current, exact: false };
  }

  /** Follows a `$ref` chain from `current` to the node it names; undefined when a target is missing. */
  follow(current, seen) {
    const ref = refOf(current.node);
    if (ref === undefined) return current;
    const { file, pointer } = targetOf(current.file, ref);
    const key = `${file}#${pointer}`;
    if (seen.has(key) || !existsSync(file)) return undefined;
    const found = this.walk(file, pointerSegments(pointer), { seen: new Set([...seen, key]) });
    return found.exact ? found : undefined;
  }

  /**
   * The `$ref` that `node` (at segments `at` of `file`) is, if it is one: where its `$ref` key is, and
   * whether it is an alias (a `components` entry or a whole file: it names its target, not uses it).
   * @returns {RefSite | undefined}
   */
  refSite(file, node, at) {
    const ref = refOf(node);
    if (ref === undefined) return undefined;
    const key = node.items.find((p) => isScalar(p.key) && p.key.value === '$ref').key;
    const alias =
      at.length === 0 || (at.length === 3 && at[0] === 'components' && COMPONENT_KINDS.has(at[1]));
    return { here: { ...this.position(file, key), exact: true }, file, pointer: toPointer(at), alias };
  }

  /**
   * Where the `$ref` key of the node at `pointer` in `file` is, when that node is a `$ref` that uses
   * its target (not an alias); undefined otherwise. Nothing on the way is followed.
   *
   * @param {string} file absolute path of a source file
   * @param {string} pointer JSON pointer inside it
   * @returns {SourceLocation | undefined}
   */
  refKey(file, pointer) {
    if (!existsSync(file)) return undefined;
    const at = pointerSegments(pointer);
    let node = this.load(file).doc.contents;
    for (const segment of at) node = child(node, segment)?.node;
    const site = this.refSite(file, node, at);
    return site && !site.alias ? site.here : undefined;
  }

  /**
   * The `$ref`s that use the node at `pointer` in `file`, each at its `$ref` key: every one reachable
   * from the root, through aliases (a `components` entry naming a file is followed to the `$ref`s
   * naming that entry). Empty when nothing uses the node by `$ref`.
   *
   * @param {string} file absolute path of a source file
   * @param {string} pointer JSON pointer inside it (`#/` or `` for the whole file)
   * @returns {SourceLocation[]}
   */
  referrers(file, pointer, seen = new Set()) {
    const key = `${resolve(file)}#${toPointer(pointerSegments(pointer))}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return (this.refIndex().get(key) ?? []).flatMap((site) =>
      site.alias ? this.referrers(site.file, site.pointer, seen) : [site.here],
    );
  }

  /** Every `$ref` in the files reachable from the root, by the `file#pointer` of its target (cached). */
  refIndex() {
    if (this.refSites) return this.refSites;
    this.refSites = new Map();
    const pending = [this.rootFile];
    const done = new Set();
    while (pending.length > 0) {
      const file = pending.pop();
      if (done.has(file) || !existsSync(file)) continue;
      done.add(file);
      for (const { node, at } of nodes(this.load(file).doc.contents)) {
        const site = this.refSite(file, node, at);
        if (!site) continue;
        const target = targetOf(file, refOf(node));
        const key = `${target.file}#${target.pointer}`;
        this.refSites.set(key, [...(this.refSites.get(key) ?? []), site]);
        pending.push(target.file);
      }
    }
    return this.refSites;
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

/** The maps of a Components Object (OpenAPI 3.1 §4.8.7): an entry there names a reusable node. */
const COMPONENT_KINDS = new Set([
  'schemas',
  'responses',
  'parameters',
  'examples',
  'requestBodies',
  'headers',
  'securitySchemes',
  'links',
  'callbacks',
  'pathItems',
]);

/**
 * A `$ref` in the sources, at its `$ref` key.
 * @typedef {{ here: SourceLocation, file: string, pointer: string, alias: boolean }} RefSite
 */

/** The file and the normalized JSON pointer that `ref`, written in `file`, names. */
function targetOf(file, ref) {
  const [path, fragment = ''] = ref.split('#');
  const target = path ? resolve(dirname(file), decodeURI(path)) : file;
  return { file: target, pointer: toPointer(pointerSegments(fragment)) };
}

/** Every mapping and sequence node under `node` (and itself), with its segments from `node`. */
function* nodes(node, at = []) {
  if (isMap(node)) {
    yield { node, at };
    for (const pair of node.items) {
      yield* nodes(pair.value, [...at, String(isScalar(pair.key) ? pair.key.value : pair.key)]);
    }
  } else if (isSeq(node)) {
    yield { node, at };
    for (const [index, item] of node.items.entries()) yield* nodes(item, [...at, String(index)]);
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
