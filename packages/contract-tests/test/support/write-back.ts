import { isDeepStrictEqual } from 'node:util';
import { resolveRef } from '@svc/contract';
import { escapePointer, resolve, validatorAt } from '../../src/validate.js';
import { document, type IndexedOperation, OPERATIONS } from './spec-index.js';

// The write-then-read-back plan, generated from the bundle: for every operation that creates (POST to a
// collection) or updates (PATCH or PUT of one resource) with a JSON body, which fields a client can write
// and where the resource is read again. The suite in ../suites/write-back.ts runs it.

type Json = Record<string, unknown>;

/** One write to check: the request that sets every writable field, and the GET that must return them. */
export interface WriteCase {
  op: IndexedOperation;
  kind: 'create' | 'update';
  /** The path of one resource, e.g. `/workspaces/{workspace}/service-accounts/{service_account}`. */
  itemPath: string;
  /** Its last parameter: a created resource's id goes there for the cases after it. */
  param: string;
  /** The writable (not `readOnly`) properties of the request body, in schema order. */
  fields: string[];
  /** Writable fields the representation has no property for: sent, but nothing can be compared. */
  unreadable: string[];
  /** The key of the resource in the write's success body (`{"computer": …, "operations": […]}`). */
  responseKey: string;
  /** The GET that reads the resource: its own (`item`) or its collection's list, searched by id. */
  read: { op: IndexedOperation; key: string; list: boolean };
  /** The first example of the request body, if the spec gives one. */
  example: Json | undefined;
  /** JSON pointer to the request body's schema in the bundle. */
  bodyPointer: string;
}

/** A write the plan cannot check, and why. */
export interface NotApplicable {
  op: IndexedOperation;
  reason: string;
}

const ITEM_PARAM = /\/\{([^/{}]+)\}$/;

/**
 * Fields a write leaves out, per operation, because another field it sets excludes them: a computer is
 * created from an `image` or a `snapshot`, never both (the snapshots suite creates one from a snapshot).
 */
export const EXCLUDED: Readonly<Record<string, readonly string[]>> = {
  createComputer: ['snapshot'],
};

/** The node at a JSON pointer of the bundle, or undefined when there is none. */
function at(pointer: string): unknown {
  try {
    return resolveRef(document, `#${pointer}`);
  } catch {
    return undefined;
  }
}

/** A schema node with its `$ref` followed, the referring node's own keywords (3.1 siblings) on top. */
function schemaAt(pointer: string): Json {
  const node = (at(pointer) ?? {}) as Json;
  const { $ref: _ref, ...siblings } = node;
  return { ...resolve(node).value, ...siblings };
}

/** The pointer of a node, following its `$ref` (so properties of a named schema get stable pointers). */
function refPointer(pointer: string): string {
  return resolve(at(pointer)).pointer ?? pointer;
}

/** The success (2xx) JSON body schema of an operation, as a pointer. */
function successBody(op: IndexedOperation): string | undefined {
  const base = `/paths/${escapePointer(op.path)}/${op.method}/responses`;
  for (const status of Object.keys(op.operation.responses as Json)) {
    if (!status.startsWith('2')) continue;
    const response = refPointer(`${base}/${status}`);
    const schema = `${response}/content/application~1json/schema`;
    if (at(schema) !== undefined) return refPointer(schema);
  }
  return undefined;
}

const properties = (pointer: string): Record<string, unknown> =>
  (schemaAt(pointer).properties as Record<string, unknown> | undefined) ?? {};

/** The envelope key holding one resource (an object with an `id`), or a list of them. */
function envelopeKey(pointer: string, list: boolean): string | undefined {
  for (const key of Object.keys(properties(pointer))) {
    const child = refPointer(`${pointer}/properties/${escapePointer(key)}`);
    const schema = schemaAt(child);
    const item = list && schema.type === 'array' ? refPointer(`${child}/items`) : child;
    if ((list ? schema.type === 'array' : schema.type === 'object') && 'id' in properties(item)) return key;
  }
  return undefined;
}

/** Pointer to the representation schema (one resource) inside a GET's success body. */
function representation(read: WriteCase['read']): string | undefined {
  const body = successBody(read.op);
  if (!body) return undefined;
  const child = refPointer(`${body}/properties/${escapePointer(read.key)}`);
  return read.list ? refPointer(`${child}/items`) : child;
}

function findGet(path: string): IndexedOperation | undefined {
  return OPERATIONS.find((op) => op.method === 'get' && op.path === path);
}

/** The paths of one resource below a collection: `/a/{b}` for `/a`. */
function itemPathsOf(collection: string): string[] {
  return Object.keys(document.paths).filter(
    (path) =>
      path.startsWith(`${collection}/{`) &&
      ITEM_PARAM.test(path) &&
      !path.slice(collection.length + 1).includes('/'),
  );
}

/**
 * The write-back plan of the bundled spec: the cases in an order where every path parameter names a
 * resource an earlier case created (by depth, creates before updates), and the writes left out, with
 * the reason.
 *
 * @example
 * const { cases } = writeCases();
 * cases.map((c) => c.op.operationId); // ['createWorkspace', 'updateWorkspace', …]
 */
export function writeCases(operations: readonly IndexedOperation[] = OPERATIONS): {
  cases: WriteCase[];
  notApplicable: NotApplicable[];
} {
  const cases: WriteCase[] = [];
  const notApplicable: NotApplicable[] = [];
  for (const op of operations) {
    if (!['post', 'patch', 'put'].includes(op.method)) continue;
    const requestBody = `/paths/${escapePointer(op.path)}/${op.method}/requestBody`;
    const schemaPointer = `${refPointer(requestBody)}/content/application~1json/schema`;
    const skip = (reason: string) => notApplicable.push({ op, reason });
    if (at(schemaPointer) === undefined) {
      // No body: nothing is written (actions such as stop). A body of bytes (a file, a tar archive) is
      // no resource to read back: the files suite checks the bytes out against the bytes in.
      const body = at(requestBody) === undefined ? undefined : resolve(at(requestBody)).value;
      const types = Object.keys(((body?.content ?? {}) as Json) ?? {});
      if (types.length > 0)
        skip(`its body is ${types.join(', ')}, not JSON: the files suite checks its bytes`);
      continue;
    }
    const bodyPointer = refPointer(schemaPointer);
    const fields = Object.entries(properties(bodyPointer))
      .filter(([name]) => schemaAt(`${bodyPointer}/properties/${escapePointer(name)}`).readOnly !== true)
      .map(([name]) => name)
      .filter((name) => !EXCLUDED[op.operationId]?.includes(name));

    const kind = op.method === 'post' ? 'create' : 'update';
    const itemPath = kind === 'update' ? op.path : itemPathsOf(op.path)[0];
    const param = itemPath ? ITEM_PARAM.exec(itemPath)?.[1] : undefined;
    if (!itemPath || !param) {
      skip(`${op.path} is no collection: no path ${op.path}/{…} names what it creates`);
      continue;
    }
    const item = findGet(itemPath);
    const list = kind === 'create' && !item ? findGet(op.path) : undefined;
    const readOp = item ?? list;
    const readKey = readOp && successBody(readOp) ? envelopeKey(successBody(readOp)!, !item) : undefined;
    if (!readOp || !readKey) {
      skip(`no GET reads a resource back at ${itemPath}${kind === 'create' ? ` or ${op.path}` : ''}`);
      continue;
    }
    const written = successBody(op);
    const responseKey = written ? envelopeKey(written, false) : undefined;
    if (!responseKey) {
      skip('its success answer holds no resource (an object with an id)');
      continue;
    }
    const read = { op: readOp, key: readKey, list: !item };
    const readable = Object.keys(properties(representation(read) ?? ''));
    const content = (resolve(at(requestBody)).value.content as Json)['application/json'] as Json;
    const examples = Object.values((content.examples as Json | undefined) ?? {});
    const example = (examples[0] ? resolve(examples[0]).value.value : content.example) as Json | undefined;
    cases.push({
      op,
      kind,
      itemPath,
      param,
      fields,
      unreadable: fields.filter((field) => !readable.includes(field)),
      responseKey,
      read,
      example,
      bodyPointer,
    });
  }
  const depth = (c: WriteCase) => c.itemPath.split('{').length;
  const resources = [...new Set(cases.map((c) => c.itemPath))]; // in spec order
  const first = (c: WriteCase) => resources.indexOf(c.itemPath);
  cases.sort(
    (a, b) =>
      depth(a) - depth(b) || first(a) - first(b) || (a.kind === b.kind ? 0 : a.kind === 'create' ? -1 : 1),
  );
  return { cases, notApplicable };
}

/** Where a written value came from: the spec's request example, the run, the schema. */
export type ValueSource = 'example' | 'reference' | 'enum' | 'synthesized' | 'default';

/** What a body is built from besides the schema. */
export interface BodyContext {
  /** Values to use first (the mock: the spec's request example, which its response example echoes). */
  example?: Json | undefined;
  /**
   * Fields the run supplies: those that name another resource (the schema cannot say which), and those
   * whose valid values move with the clock (an expiry must lie ahead of the request).
   */
  references: Readonly<Record<string, () => unknown>>;
  /** The resource as it is before an update: every value sent must differ from it, or nothing is proved. */
  current?: Json | undefined;
}

let counter = 0;

/** A fresh value valid for a schema, or undefined when the schema gives too little to make one. */
function synthesize(schema: Json, pointer: string): unknown {
  counter += 1;
  const stamp = `${Date.now().toString(36)}${counter.toString(36)}`;
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time')
        return new Date(Math.ceil(Date.now() / 1000 + 30 * 86_400 + counter) * 1000)
          .toISOString()
          .replace('.000Z', 'Z');
      return `wb-${stamp}`;
    case 'integer':
    case 'number': {
      const low = typeof schema.minimum === 'number' ? schema.minimum : 0;
      return schema.default === low ? low + 1 : low;
    }
    case 'boolean':
      return schema.default !== true;
    case 'array': {
      const item = synthesize(schemaAt(`${pointer}/items`), refPointer(`${pointer}/items`));
      return item === undefined ? undefined : [item];
    }
    case 'object': {
      const patterns = Object.keys((schema.patternProperties as Json | undefined) ?? {});
      if (patterns[0] !== undefined) {
        const valuePointer = `${pointer}/patternProperties/${escapePointer(patterns[0])}`;
        const value = synthesize(schemaAt(valuePointer), refPointer(valuePointer));
        return value === undefined ? undefined : { [`k-${stamp}`]: value };
      }
      const out: Json = {};
      for (const name of (schema.required as string[] | undefined) ?? []) {
        const child = `${pointer}/properties/${escapePointer(name)}`;
        const value = synthesize(schemaAt(child), refPointer(child));
        if (value === undefined) return undefined;
        out[name] = value;
      }
      return out;
    }
    default:
      return undefined;
  }
}

/**
 * A request body that sets every writable field of a case with a value valid for its schema (checked
 * with ajv against the bundle), and where each value came from. Tried in order: the context's example,
 * a run reference, an enum value other than the default, a fresh synthesized value, the schema's
 * example, its default. An update skips values equal to the current ones.
 *
 * @example
 * const { body } = buildBody(createComputerCase, { references: { size: () => 'medium' } });
 */
export function buildBody(
  writeCase: WriteCase,
  context: BodyContext,
): { body: Json; sources: Record<string, ValueSource> } {
  const body: Json = {};
  const sources: Record<string, ValueSource> = {};
  for (const field of writeCase.fields) {
    const pointer = `${writeCase.bodyPointer}/properties/${escapePointer(field)}`;
    const schema = schemaAt(pointer);
    const validate = validatorAt(pointer);
    const current = context.current?.[field];
    const enumValues = ((schema.enum as unknown[] | undefined) ?? []).filter(
      (value) => value !== schema.default && !isDeepStrictEqual(value, current),
    );
    const candidates: [ValueSource, () => unknown][] = [
      ['example', () => context.example?.[field]],
      ['reference', () => context.references[field]?.()],
      ['enum', () => enumValues[0]],
      ['synthesized', () => synthesize(schema, refPointer(pointer))],
      ['example', () => (schema.examples as unknown[] | undefined)?.[0] ?? schema.example],
      ['default', () => schema.default],
    ];
    const found = candidates.find(([source, make]) => {
      const value = make();
      if (value === undefined || !validate(value)) return false;
      if (context.current && isDeepStrictEqual(value, current)) return false;
      body[field] = value;
      sources[field] = source;
      return true;
    });
    if (!found)
      throw new Error(
        `${writeCase.op.operationId}: no valid value for ${field} (give its schema an example, or the run a reference)`,
      );
  }
  return { body, sources };
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Equal as JSON, or the same instant for two RFC 3339 timestamps (the server may add fractions). An
 * object whose request schema declares its properties (`keys`) is compared on those: the answer may
 * add what a request cannot write (a lifetime's `last_active_at`); a map (labels) is compared whole.
 */
function sameValue(sent: unknown, got: unknown, keys?: readonly string[]): boolean {
  if (isDeepStrictEqual(sent, got)) return true;
  if (keys && isRecord(sent) && isRecord(got))
    return keys.every((key) => (key in sent ? key in got && sameValue(sent[key], got[key]) : !(key in got)));
  return (
    typeof sent === 'string' &&
    typeof got === 'string' &&
    RFC3339.test(sent) &&
    RFC3339.test(got) &&
    Date.parse(sent) === Date.parse(got)
  );
}

/**
 * The fields of a case whose schema is an object with declared properties (or such an object or
 * `null`), and those properties: the keys a request can write there.
 *
 * @example
 * declaredKeys(updateComputerCase); // { lifetime: ['idle_timeout_seconds', 'expires_at', 'on_end'] }
 */
export function declaredKeys(writeCase: WriteCase): Record<string, string[]> {
  const keys: Record<string, string[]> = {};
  for (const field of writeCase.fields) {
    const pointer = `${writeCase.bodyPointer}/properties/${escapePointer(field)}`;
    const schema = schemaAt(pointer);
    const branches = Array.isArray(schema.oneOf)
      ? schema.oneOf.map((_, i) => schemaAt(`${refPointer(pointer)}/oneOf/${i}`))
      : [schema];
    const object = branches.find((branch) => isRecord(branch.properties));
    if (object) keys[field] = Object.keys(object.properties as Json);
  }
  return keys;
}

/**
 * One line per written field the resource does not return equal: absent, or another value. Empty when
 * every field came back.
 *
 * @example
 * unechoed({ name: 'web-1' }, { id: '…', name: 'web-2' }); // ['name: sent "web-1", got "web-2"']
 */
export function unechoed(
  written: Json,
  resource: unknown,
  declared: Readonly<Record<string, readonly string[]>> = {},
): string[] {
  if (typeof resource !== 'object' || resource === null)
    return [`no resource in the answer: ${JSON.stringify(resource)}`];
  const got = resource as Json;
  return Object.entries(written).flatMap(([field, value]) => {
    if (!(field in got)) return [`${field}: sent ${JSON.stringify(value)}, absent`];
    if (!sameValue(value, got[field], declared[field]))
      return [`${field}: sent ${JSON.stringify(value)}, got ${JSON.stringify(got[field])}`];
    return [];
  });
}
