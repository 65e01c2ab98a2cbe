// The shape of an OpenAPI document: the same document without its prose, so that the types generated from
// it change only when a schema, parameter or operation changes. A description edit then leaves schema.ts
// byte-identical, and turbo replays every TypeScript package from cache (see generate.mjs).

/** Keywords that carry words for people, never structure: they are dropped wherever they are keywords. */
const PROSE = new Set(['description', 'summary', 'example', 'examples', 'externalDocs']);

/**
 * Keywords whose value maps names chosen by the author to objects. Inside such a map a key called
 * `description` is a name (a property, a header, a component), so it is kept.
 */
const NAMED_MAPS = new Set([
  'paths',
  'webhooks',
  'schemas',
  'responses',
  'parameters',
  'requestBodies',
  'headers',
  'securitySchemes',
  'links',
  'callbacks',
  'pathItems',
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'content',
  'encoding',
  'mapping',
  'variables',
  'scopes',
]);

/** Keywords whose value is a list of maps from names (security scheme names) to values. */
const NAMED_MAP_LISTS = new Set(['security']);

/**
 * Returns a copy of `node` without prose keywords. `named` says that `node` is a map from author-chosen
 * names, whose keys are kept whatever they are.
 *
 * @param {unknown} node a parsed OpenAPI 3.1 document or any part of one
 * @param {boolean} [named] whether `node` is a map from author-chosen names
 * @returns {unknown}
 */
export function withoutProse(node, named = false) {
  if (Array.isArray(node)) return node.map((item) => withoutProse(item, named));
  if (node === null || typeof node !== 'object') return node;
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (named) {
      out[key] = withoutProse(value, false);
      continue;
    }
    if (PROSE.has(key)) continue;
    if (NAMED_MAP_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((item) => withoutProse(item, true));
      continue;
    }
    out[key] = withoutProse(value, NAMED_MAPS.has(key) && !Array.isArray(value));
  }
  return out;
}
