import { effectiveParameters, flatten, isObject, operations, typesOf } from '../lib/openapi.js';

/** The declaration a path parameter carries, and what each value means. */
const KINDS = {
  id: 'an id',
  name: 'a name',
  'id-or-name': 'an id or a name',
};

/**
 * svc-path-parameter-accepts: every path parameter says whether it takes an id, a name, or either,
 * with `x-svc-accepts: id | name | id-or-name`, and its schema and description agree with that:
 *  - `id`: the id shape (a string with the id pattern, minLength and maxLength = the id length), and a
 *    description that says "id" and not "name";
 *  - `name` or `id-or-name`: a string with the DNS-label name pattern and a maxLength of at most the
 *    name's (ids fit that pattern, so one schema serves both), and a description that says "name", or
 *    "id or name".
 * Checks the path parameters of every operation and of components.parameters.
 * Options: { extension, idPattern, idLength, namePattern, nameMaxLength }.
 */
export default function pathParameterAccepts(doc, options) {
  const { extension, idPattern, idLength, namePattern, nameMaxLength } = options ?? {};
  const results = [];
  const seen = new Set();
  const check = (parameter, at) => {
    if (!isObject(parameter) || parameter.in !== 'path') return;
    const key = at.join('\u0000');
    if (seen.has(key)) return;
    seen.add(key);
    const name = `Path parameter \`${String(parameter.name)}\``;
    const kind = parameter[extension];
    if (!Object.hasOwn(KINDS, kind)) {
      results.push({
        message: `${name} must say what it takes: \`${extension}\` is one of ${Object.keys(KINDS).join(', ')} (got ${JSON.stringify(kind) ?? 'nothing'}).`,
        path: at,
      });
      return;
    }
    const problems =
      kind === 'id'
        ? idProblems(parameter.schema, idPattern, idLength)
        : nameProblems(parameter.schema, namePattern, nameMaxLength);
    problems.push(...descriptionProblems(parameter.description, kind));
    if (problems.length > 0) {
      results.push({
        message: `${name} takes ${KINDS[kind]} (\`${extension}: ${kind}\`), but ${problems.join('; ')}.`,
        path: at,
      });
    }
  };
  for (const [componentName, parameter] of Object.entries(doc?.components?.parameters ?? {})) {
    check(parameter, ['components', 'parameters', componentName]);
  }
  for (const op of operations(doc)) {
    for (const { parameter, at } of effectiveParameters(op)) check(parameter, at);
  }
  return results;
}

function stringSchema(schema) {
  const flat = flatten(schema);
  if (flat === undefined) return { problems: ['its schema is a union of several types'] };
  const types = typesOf(flat.schema);
  const problems = [];
  if (!(types.size === 1 && types.has('string')))
    problems.push(`its type is ${types.size ? [...types].join('|') : 'missing'}, not string`);
  if (flat.nullable) problems.push('its schema allows null');
  return { schema: flat.schema, problems };
}

function idProblems(schema, pattern, length) {
  const { schema: s, problems } = stringSchema(schema);
  if (s === undefined) return problems;
  if (s.pattern !== pattern)
    problems.push(`its pattern is ${s.pattern ?? 'missing'}, not the id pattern ${pattern}`);
  if (s.minLength !== length || s.maxLength !== length)
    problems.push(`its length is ${s.minLength ?? '?'}..${s.maxLength ?? '?'}, not exactly ${length}`);
  return problems;
}

function nameProblems(schema, pattern, maxLength) {
  const { schema: s, problems } = stringSchema(schema);
  if (s === undefined) return problems;
  if (s.pattern !== pattern)
    problems.push(`its pattern is ${s.pattern ?? 'missing'}, not the name pattern ${pattern}`);
  if (typeof s.maxLength !== 'number' || s.maxLength > maxLength)
    problems.push(`its maxLength is ${s.maxLength ?? 'missing'}, not at most ${maxLength}`);
  return problems;
}

/** The description tells readers of the docs the same thing the declaration tells the tools. */
function descriptionProblems(description, kind) {
  const text = typeof description === 'string' ? description : '';
  const id = /\bids?\b/i.test(text);
  const name = /\bnames?\b/i.test(text);
  const either = /\bid or (a )?name\b/i.test(text);
  if (kind === 'id' && !(id && !name)) return ['its description must say it takes an id (and not a name)'];
  if (kind === 'name' && !(name && !id)) return ['its description must say it takes a name (and not an id)'];
  if (kind === 'id-or-name' && !either) return ['its description must say it takes an "id or name"'];
  return [];
}
