// Helpers shared by the svc-* Spectral functions. Every function runs with `given: $` on the
// RESOLVED document (Spectral inlines local $refs), so these helpers never follow $ref themselves.
// Paths they return are paths in the resolved document; Spectral maps them back to the place the
// value is written (e.g. a shared schema is reported once, at #/components/schemas/...).

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

export { isObject };

/**
 * Yields every operation of `paths`: { path, method, operation, pathItem, at } where `at` is its JSON
 * path. Never a webhook's: the `webhooks` section holds requests the service sends, not operations of the
 * JSON API, so every rule that walks operations with this skips them on purpose (svc-webhooks checks
 * them, lib/webhooks.js).
 */
export function* operations(doc) {
  if (!isObject(doc?.paths)) return;
  for (const [path, pathItem] of Object.entries(doc.paths)) {
    if (!isObject(pathItem)) continue;
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method];
      if (isObject(operation)) yield { path, method, operation, pathItem, at: ['paths', path, method] };
    }
  }
}

/**
 * The parameters an operation effectively takes: path-level ones overridden by operation-level ones
 * with the same name and location (OpenAPI 3.1 §4.8.10). Each entry is { parameter, at }.
 */
export function effectiveParameters({ pathItem, operation, at }) {
  const byKey = new Map();
  const add = (list, base) => {
    if (!Array.isArray(list)) return;
    list.forEach((parameter, index) => {
      if (!isObject(parameter)) return;
      byKey.set(`${parameter.in}:${String(parameter.name).toLowerCase()}`, {
        parameter,
        at: [...base, 'parameters', index],
      });
    });
  };
  add(pathItem.parameters, at.slice(0, 2));
  add(operation.parameters, at);
  return [...byKey.values()];
}

/** Yields { status, response, at } for every response of every operation. */
export function* responses(doc) {
  for (const op of operations(doc)) {
    if (!isObject(op.operation.responses)) continue;
    for (const [status, response] of Object.entries(op.operation.responses)) {
      if (isObject(response)) yield { ...op, status, response, at: [...op.at, 'responses', status] };
    }
  }
}

/** The JSON media type object of a response or request body, if any. */
export function jsonMedia(holder) {
  const content = holder?.content;
  if (!isObject(content)) return undefined;
  const key = Object.keys(content).find((type) =>
    /^application\/(.+\+)?json$/i.test(type.split(';')[0].trim()),
  );
  return key === undefined ? undefined : { key, media: content[key] };
}

/** Keywords that hold one subschema. */
const SUBSCHEMA = [
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'contentSchema',
];
/** Keywords that hold an array of subschemas. */
const SUBSCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords that hold a map of subschemas. */
const SUBSCHEMA_MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs'];

/** Calls visit(schema, path) for a schema and every schema nested in it, each object once. */
export function walkSchema(schema, path, visit, seen = new WeakSet()) {
  if (!isObject(schema) || seen.has(schema)) return;
  seen.add(schema);
  visit(schema, path);
  for (const key of SUBSCHEMA) {
    if (isObject(schema[key])) walkSchema(schema[key], [...path, key], visit, seen);
  }
  for (const key of SUBSCHEMA_LIST) {
    if (!Array.isArray(schema[key])) continue;
    for (const [i, sub] of schema[key].entries()) walkSchema(sub, [...path, key, i], visit, seen);
  }
  for (const key of SUBSCHEMA_MAP) {
    if (isObject(schema[key])) {
      for (const [name, sub] of Object.entries(schema[key]))
        walkSchema(sub, [...path, key, name], visit, seen);
    }
  }
}

/** Schemas at the roots a document can hold them: components, parameters, headers, bodies, responses. */
function* schemaRoots(doc) {
  const mediaSchemas = function* (holder, at) {
    if (!isObject(holder?.content)) return;
    for (const [type, media] of Object.entries(holder.content)) {
      if (isObject(media?.schema)) yield [media.schema, [...at, 'content', type, 'schema']];
    }
  };
  const headerSchemas = function* (holder, at) {
    if (!isObject(holder?.headers)) return;
    for (const [name, header] of Object.entries(holder.headers)) {
      if (isObject(header?.schema)) yield [header.schema, [...at, 'headers', name, 'schema']];
    }
  };
  const components = isObject(doc?.components) ? doc.components : {};
  for (const [name, schema] of Object.entries(components.schemas ?? {}))
    yield [schema, ['components', 'schemas', name]];
  for (const [name, p] of Object.entries(components.parameters ?? {})) {
    if (isObject(p?.schema)) yield [p.schema, ['components', 'parameters', name, 'schema']];
  }
  for (const [name, h] of Object.entries(components.headers ?? {})) {
    if (isObject(h?.schema)) yield [h.schema, ['components', 'headers', name, 'schema']];
  }
  for (const [name, b] of Object.entries(components.requestBodies ?? {}))
    yield* mediaSchemas(b, ['components', 'requestBodies', name]);
  for (const [name, r] of Object.entries(components.responses ?? {})) {
    yield* mediaSchemas(r, ['components', 'responses', name]);
    yield* headerSchemas(r, ['components', 'responses', name]);
  }
  for (const op of operations(doc)) {
    for (const { parameter, at } of effectiveParameters(op)) {
      if (isObject(parameter.schema)) yield [parameter.schema, [...at, 'schema']];
    }
    yield* mediaSchemas(op.operation.requestBody, [...op.at, 'requestBody']);
    for (const [status, response] of Object.entries(op.operation.responses ?? {})) {
      yield* mediaSchemas(response, [...op.at, 'responses', status]);
      yield* headerSchemas(response, [...op.at, 'responses', status]);
    }
  }
}

/** Calls visit(schema, path) for every schema in the document, each schema object once. */
export function walkAllSchemas(doc, visit) {
  const seen = new WeakSet();
  for (const [schema, path] of schemaRoots(doc)) walkSchema(schema, path, visit, seen);
}

/** The set of JSON types a schema allows by its `type` keyword (empty when it has none). */
export function typesOf(schema) {
  if (typeof schema?.type === 'string') return new Set([schema.type]);
  if (Array.isArray(schema?.type)) return new Set(schema.type);
  return new Set();
}

const isNullSchema = (s) =>
  isObject(s) &&
  (s.type === 'null' ||
    s.const === null ||
    (Array.isArray(s.enum) && s.enum.length === 1 && s.enum[0] === null));

/** Shallow merge of two schemas where `over` wins, except that properties and required are unioned. */
function merge(base, over) {
  const out = { ...base, ...over };
  if (isObject(base.properties) || isObject(over.properties))
    out.properties = { ...base.properties, ...over.properties };
  if (Array.isArray(base.required) || Array.isArray(over.required)) {
    out.required = [...new Set([...(base.required ?? []), ...(over.required ?? [])])];
  }
  return out;
}

/**
 * Flattens the composition a property schema uses, so that rules can check facets like `pattern`
 * written either directly or through `allOf: [{$ref}]` (the usual way to add a description to a ref),
 * or through a nullable union `oneOf/anyOf: [X, {type: 'null'}]` / `type: [string, 'null']`.
 * Returns { schema, nullable } where schema is a shallow merge, or undefined when the shape is a
 * real union of several non-null alternatives (rules then report it as not a plain string).
 */
export function flatten(schema) {
  if (!isObject(schema)) return undefined;
  let nullable = false;
  let merged = { ...schema };
  delete merged.allOf;
  delete merged.oneOf;
  delete merged.anyOf;
  for (const part of Array.isArray(schema.allOf) ? schema.allOf : []) {
    const flat = flatten(part);
    if (flat === undefined) return undefined;
    nullable ||= flat.nullable;
    merged = merge(flat.schema, merged);
  }
  for (const key of ['oneOf', 'anyOf']) {
    if (!Array.isArray(schema[key])) continue;
    const alternatives = schema[key].filter((s) => !isNullSchema(s));
    if (alternatives.length !== 1) return undefined;
    nullable ||= alternatives.length < schema[key].length;
    const flat = flatten(alternatives[0]);
    if (flat === undefined) return undefined;
    nullable ||= flat.nullable;
    merged = merge(flat.schema, merged);
  }
  const types = typesOf(merged);
  if (types.has('null')) {
    nullable = true;
    types.delete('null');
    merged.type = types.size === 1 ? [...types][0] : [...types];
  }
  return { schema: merged, nullable };
}

/** True when the (flattened) schema is exactly a string, possibly nullable. */
export function isStringSchema(schema) {
  const flat = flatten(schema);
  if (flat === undefined) return false;
  const types = typesOf(flat.schema);
  return types.size === 1 && types.has('string');
}

/** Crude English plural test, good enough for resource nouns (computers, keys, service_accounts, identities). */
export function isPluralNoun(word) {
  return /s$/.test(word) && !/(ss|us|is)$/.test(word);
}

/** The names of the properties an object schema declares, after flattening allOf. */
export function objectShape(schema) {
  const flat = flatten(schema);
  if (flat === undefined) return undefined;
  const s = flat.schema;
  const types = typesOf(s);
  if (types.size > 0 && !(types.size === 1 && types.has('object'))) return undefined;
  const properties = isObject(s.properties) ? s.properties : {};
  const required = Array.isArray(s.required) ? s.required : [];
  return { schema: s, properties, required, nullable: flat.nullable };
}

/**
 * A list operation: operationId starts with `list`, or a GET whose 200 JSON body has an array property.
 * (Both, so a list that is misnamed is still held to the list envelope.)
 */
export function isListOperation({ method, operation }) {
  if (typeof operation.operationId === 'string' && /^list[A-Z_]/.test(operation.operationId)) return true;
  if (method !== 'get') return false;
  const shape = objectShape(jsonMedia(operation.responses?.['200'])?.media?.schema);
  if (shape === undefined) return false;
  return Object.values(shape.properties).some((p) => typesOf(flatten(p)?.schema).has('array'));
}

/** `[path, method]` pairs given as "GET /health" strings in rule options. */
export function matchesRoute(routes, { path, method }) {
  return (routes ?? []).some((route) => {
    const [m, p] = String(route).trim().split(/\s+/);
    return m.toLowerCase() === method && p === path;
  });
}
