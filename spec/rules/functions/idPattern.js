import {
  effectiveParameters,
  flatten,
  isObject,
  operations,
  typesOf,
  walkAllSchemas,
} from '../lib/openapi.js';
import { streamItemSchemas } from '../lib/streams.js';

/**
 * svc-id-pattern: ids are 27-character lowercase Crockford base32 strings (conventions §2, design §1).
 * Checks every schema property named `id` or ending in `_id`, and every path/query parameter that is
 * an id by its name (`id`, `*_id`). A path parameter that declares what it takes (`x-svc-accepts`) is
 * left to svc-path-parameter-accepts, so one broken parameter is reported once. The SSE `id` field of a
 * stream's item schema is the event's cursor, no resource id: svc-event-stream checks it.
 * Options: { pattern, length, exclude: string[], declaration: the extension (default x-svc-accepts) }.
 */
export default function idPattern(doc, options) {
  const { pattern, length, exclude = [], declaration = 'x-svc-accepts' } = options ?? {};
  const isIdName = (name) => !exclude.includes(name) && (name === 'id' || /_id$/.test(name));
  const results = [];
  const check = (schema, path, what) => {
    const problems = idProblems(schema, pattern, length);
    if (problems.length > 0) {
      results.push({
        message: `${what} must be a 27-character id: a string with pattern ${pattern}, minLength ${length} and maxLength ${length} (${problems.join('; ')}).`,
        path,
      });
    }
  };
  // The `id` of a Server-Sent Event is the stream's cursor (`Last-Event-ID`), not a resource id:
  // svc-event-stream checks it.
  const streamItems = streamItemSchemas(doc);
  walkAllSchemas(doc, (schema, path) => {
    if (!isObject(schema.properties)) return;
    for (const [name, property] of Object.entries(schema.properties)) {
      if (name === 'id' && streamItems.has(schema)) continue;
      if (isIdName(name)) check(property, [...path, 'properties', name], `Property \`${name}\``);
    }
  });
  const seen = new Set();
  for (const op of operations(doc)) {
    for (const { parameter, at } of effectiveParameters(op)) {
      if (parameter.in !== 'path' && parameter.in !== 'query') continue;
      if (parameter.in === 'path' && declaration in parameter) continue;
      const name = String(parameter.name);
      if (!isIdName(name)) continue;
      const key = at.join('\u0000');
      if (seen.has(key)) continue;
      seen.add(key);
      check(parameter.schema, at, `${parameter.in} parameter \`${name}\``);
    }
  }
  return results;
}

function idProblems(schema, pattern, length) {
  const flat = flatten(schema);
  if (flat === undefined) return ['it is a union of several types'];
  const s = flat.schema;
  const types = typesOf(s);
  const problems = [];
  if (!(types.size === 1 && types.has('string')))
    problems.push(`type is ${types.size ? [...types].join('|') : 'missing'}`);
  if (s.pattern !== pattern)
    problems.push(s.pattern === undefined ? 'pattern is missing' : `pattern is ${s.pattern}`);
  if (s.minLength !== length) problems.push(`minLength is ${s.minLength ?? 'missing'}`);
  if (s.maxLength !== length) problems.push(`maxLength is ${s.maxLength ?? 'missing'}`);
  return problems;
}
