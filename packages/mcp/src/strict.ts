import type { JsonSchema } from './schema.js';

/**
 * A copy of `schema` without type arrays: `{type: ['string', 'null'], maxLength: 512}` becomes
 * `{anyOf: [{type: 'string', maxLength: 512}, {type: 'null'}]}`. Both mean the same in JSON Schema
 * 2020-12, but strict validators (the MCP Inspector's, some model providers' tool-schema checks)
 * warn on or reject a `type` that is not a single string. Each keyword goes to the branch whose type
 * it constrains; annotations (`description`, `title`, `default`, `examples`) stay on the outside.
 *
 * @example
 * strictSchema({ type: ['string', 'null'], description: 'x' });
 * // { description: 'x', anyOf: [{ type: 'string' }, { type: 'null' }] }
 */
export function strictSchema<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => strictSchema(item)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as JsonSchema).map(([k, v]) => [k, strictSchema(v)] as const);
  const schema = Object.fromEntries(entries) as JsonSchema;
  if (!Array.isArray(schema.type)) return schema as T;
  const { type, ...rest } = schema;
  const outside: JsonSchema = {};
  const inside: JsonSchema = {};
  for (const [key, keyword] of Object.entries(rest)) (OUTSIDE.has(key) ? outside : inside)[key] = keyword;
  const branches = (type as string[]).map((name) => ({
    type: name,
    ...Object.fromEntries(Object.entries(inside).filter(([key]) => appliesTo(key, name))),
  }));
  const leftover = Object.entries(inside).filter(
    ([key]) => !(type as string[]).some((name) => appliesTo(key, name)),
  );
  return { ...outside, ...Object.fromEntries(leftover), anyOf: branches } as T;
}

/** Annotations and keywords that hold for every branch: they stay beside `anyOf`. */
const OUTSIDE = new Set([
  'description',
  'title',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'enum',
  'const',
]);

/** The type each type-specific keyword of JSON Schema 2020-12 constrains. */
const KEYWORD_TYPE: Record<string, string[]> = {
  minLength: ['string'],
  maxLength: ['string'],
  pattern: ['string'],
  format: ['string'],
  minimum: ['number', 'integer'],
  maximum: ['number', 'integer'],
  exclusiveMinimum: ['number', 'integer'],
  exclusiveMaximum: ['number', 'integer'],
  multipleOf: ['number', 'integer'],
  items: ['array'],
  prefixItems: ['array'],
  minItems: ['array'],
  maxItems: ['array'],
  uniqueItems: ['array'],
  contains: ['array'],
  properties: ['object'],
  required: ['object'],
  additionalProperties: ['object'],
  propertyNames: ['object'],
  patternProperties: ['object'],
  minProperties: ['object'],
  maxProperties: ['object'],
};

function appliesTo(keyword: string, type: string): boolean {
  return KEYWORD_TYPE[keyword]?.includes(type) ?? false;
}
