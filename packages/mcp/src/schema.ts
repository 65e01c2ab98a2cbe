import { type OpenApiDocument, resolveRef } from '@svc/contract';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses) held as plain data. */
export type JsonSchema = Record<string, unknown>;

/** Keywords that only annotate: a `$ref`'s siblings with these names may simply override the target's. */
const ANNOTATIONS = new Set([
  'description',
  'title',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/**
 * A copy of `value` with every `$ref` replaced by what it points to, so a tool schema stands alone
 * (MCP clients and model providers handle `$ref` unevenly). A `$ref` with only annotation siblings
 * (the usual `description`) is merged; with other siblings it becomes `allOf`, which keeps the 2020-12
 * meaning. A reference cycle throws: the spec has none, and inlining one would never end.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const schema = inlineRefs(loadDocument(), { $ref: '#/components/schemas/Computer' });
 */
export function inlineRefs<T>(document: OpenApiDocument, value: T, seen: readonly string[] = []): T {
  if (Array.isArray(value)) return value.map((item) => inlineRefs(document, item, seen)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const { $ref, ...rest } = value as Record<string, unknown>;
  const siblings = Object.fromEntries(
    Object.entries(rest).map(([k, v]) => [k, inlineRefs(document, v, seen)]),
  );
  if (typeof $ref !== 'string') return siblings as T;
  if (seen.includes($ref)) throw new Error(`$ref cycle: ${[...seen, $ref].join(' -> ')}`);
  const target = inlineRefs(document, resolveRef(document, $ref), [...seen, $ref]) as JsonSchema;
  const onlyAnnotations = Object.keys(siblings).every((key) => ANNOTATIONS.has(key));
  return (onlyAnnotations ? { ...target, ...siblings } : { allOf: [target], ...siblings }) as T;
}

/**
 * True for a schema an MCP tool can take or return at the top level: an object with named properties.
 *
 * @example
 * isObjectSchema({ type: 'object', properties: {} }); // true
 */
export function isObjectSchema(schema: JsonSchema | undefined): schema is JsonSchema & {
  properties: Record<string, JsonSchema>;
} {
  return schema?.type === 'object' && typeof schema.properties === 'object' && schema.properties !== null;
}
