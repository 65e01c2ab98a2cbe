import {
  effectiveParameters,
  flatten,
  isListOperation,
  isPluralNoun,
  jsonMedia,
  objectShape,
  operations,
  typesOf,
} from '../lib/openapi.js';

/**
 * svc-list-envelope: a list returns `{"<nouns>": [...], "next_cursor": string|null, "has_more": boolean}`,
 * all three required, and takes `limit` and `cursor` query parameters (conventions §2 and §4 rule 5,
 * design §6). A list is an operation whose operationId starts with `list`, or a GET whose 200 body has
 * an array property.
 */
export default function listEnvelope(doc) {
  const results = [];
  for (const op of operations(doc)) {
    if (!isListOperation(op)) continue;
    const name = op.operation.operationId ?? `${op.method.toUpperCase()} ${op.path}`;
    const query = new Set(
      effectiveParameters(op)
        .filter(({ parameter }) => parameter.in === 'query')
        .map(({ parameter }) => parameter.name),
    );
    const missing = ['limit', 'cursor'].filter((p) => !query.has(p));
    if (missing.length > 0) {
      results.push({
        message: `List operation \`${name}\` must take the paging query parameter(s) ${missing.map((m) => `\`${m}\``).join(' and ')}.`,
        path: op.at,
      });
    }
    const response = op.operation.responses?.['200'];
    const json = jsonMedia(response);
    if (json === undefined) {
      results.push({
        message: `List operation \`${name}\` must answer 200 with an application/json list envelope.`,
        path: [...op.at, 'responses'],
      });
      continue;
    }
    const problem = listProblem(objectShape(json.media?.schema));
    if (problem !== undefined) {
      results.push({
        message: `A list response must be {"<nouns>": [...], "next_cursor": string|null, "has_more": boolean}, all required: ${problem}.`,
        path: [...op.at, 'responses', '200', 'content', json.key, 'schema'],
      });
    }
  }
  return results;
}

function listProblem(shape) {
  if (shape === undefined) return 'the body is not an object schema';
  const names = Object.keys(shape.properties);
  const arrays = names.filter((n) => n !== 'next_cursor' && n !== 'has_more');
  if (names.length !== 3 || arrays.length !== 1)
    return `it has properties (${names.join(', ') || 'none'}), expected exactly one array, next_cursor and has_more`;
  const [noun] = arrays;
  if (!isPluralNoun(noun)) return `\`${noun}\` should be a plural noun`;
  const items = flatten(shape.properties[noun]);
  if (
    items === undefined ||
    items.nullable ||
    !typesOf(items.schema).has('array') ||
    typesOf(items.schema).size !== 1
  )
    return `\`${noun}\` must be an array`;
  if (!('next_cursor' in shape.properties)) return '`next_cursor` is missing';
  const cursor = flatten(shape.properties.next_cursor);
  if (
    cursor === undefined ||
    !typesOf(cursor.schema).has('string') ||
    typesOf(cursor.schema).size !== 1 ||
    !cursor.nullable
  )
    return '`next_cursor` must be a string or null';
  if (!('has_more' in shape.properties)) return '`has_more` is missing';
  const more = flatten(shape.properties.has_more);
  if (
    more === undefined ||
    more.nullable ||
    !typesOf(more.schema).has('boolean') ||
    typesOf(more.schema).size !== 1
  )
    return '`has_more` must be a boolean';
  const notRequired = names.filter((n) => !shape.required.includes(n));
  if (notRequired.length > 0) return `${notRequired.map((n) => `\`${n}\``).join(', ')} not required`;
  return undefined;
}
