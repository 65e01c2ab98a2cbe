import { flatten, isObject, typesOf, walkAllSchemas } from '../lib/openapi.js';

/**
 * svc-name-dns-label: a `name` is a DNS label (conventions §2 "Names", design §1): lowercase letters,
 * digits and hyphens, no hyphen first or last, at most 63 characters.
 * Options: { pattern, maxLength }.
 */
export default function nameDnsLabel(doc, options) {
  const { pattern, maxLength } = options ?? {};
  const results = [];
  walkAllSchemas(doc, (schema, path) => {
    if (!isObject(schema.properties) || !('name' in schema.properties)) return;
    const flat = flatten(schema.properties.name);
    const problems = [];
    if (flat === undefined) {
      problems.push('it is a union of several types');
    } else {
      const s = flat.schema;
      const types = typesOf(s);
      if (!(types.size === 1 && types.has('string')))
        problems.push(`type is ${types.size ? [...types].join('|') : 'missing'}`);
      if (s.pattern !== pattern)
        problems.push(s.pattern === undefined ? 'pattern is missing' : `pattern is ${s.pattern}`);
      if (typeof s.maxLength !== 'number' || s.maxLength > maxLength)
        problems.push(`maxLength is ${s.maxLength ?? 'missing'}`);
    }
    if (problems.length > 0) {
      results.push({
        message: `Property \`name\` must be a DNS label: a string with pattern ${pattern} and maxLength at most ${maxLength} (${problems.join('; ')}).`,
        path: [...path, 'properties', 'name'],
      });
    }
  });
  return results;
}
