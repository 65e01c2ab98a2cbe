import { isObject, walkAllSchemas } from '../lib/openapi.js';

/**
 * svc-snake-case-properties: JSON field names are snake_case, like the published `next_cursor`,
 * `has_more` and `request_id` (design §2). Map keys (`additionalProperties`) are data, not fields.
 * Options: { allow: string[] } field names defined by another standard (e.g. JWK members).
 */
export default function snakeCaseProperties(doc, options) {
  const allow = new Set(options?.allow ?? []);
  const results = [];
  walkAllSchemas(doc, (schema, path) => {
    if (!isObject(schema.properties)) return;
    for (const name of Object.keys(schema.properties)) {
      if (!allow.has(name) && !/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(name)) {
        results.push({
          message: `Property \`${name}\` must be snake_case (lowercase words joined by _).`,
          path: [...path, 'properties', name],
        });
      }
    }
  });
  return results;
}
