import { flatten, jsonMedia, objectShape, responses, typesOf } from '../lib/openapi.js';

/**
 * svc-long-running-202: a long-running call answers 202 with a required `operations` array of
 * Operation objects (conventions §2 and §4 rule 4); each item has at least `id`, `type` and `state`.
 */
export default function longRunning202(doc) {
  const results = [];
  for (const r of responses(doc)) {
    if (r.status !== '202') continue;
    const name = r.operation.operationId ?? `${r.method.toUpperCase()} ${r.path}`;
    const json = jsonMedia(r.response);
    if (json === undefined) {
      results.push({
        message: `202 response of \`${name}\` must have an application/json body with an \`operations\` array.`,
        path: r.at,
      });
      continue;
    }
    const problem = operationsProblem(objectShape(json.media?.schema));
    if (problem !== undefined) {
      results.push({
        message: `A 202 response must have a required \`operations\` array of Operation objects: ${problem}.`,
        path: [...r.at, 'content', json.key, 'schema'],
      });
    }
  }
  return results;
}

function operationsProblem(shape) {
  if (shape === undefined) return 'the body is not an object schema';
  if (!('operations' in shape.properties)) return '`operations` is missing';
  if (!shape.required.includes('operations')) return '`operations` is not required';
  const list = flatten(shape.properties.operations);
  if (
    list === undefined ||
    list.nullable ||
    !typesOf(list.schema).has('array') ||
    typesOf(list.schema).size !== 1
  )
    return '`operations` is not an array';
  const item = objectShape(list.schema.items);
  if (item === undefined) return 'its items are not objects';
  const missing = ['id', 'type', 'state'].filter((p) => !(p in item.properties));
  if (missing.length > 0) return `its items lack ${missing.map((m) => `\`${m}\``).join(', ')}`;
  return undefined;
}
