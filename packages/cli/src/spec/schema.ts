/** A JSON Schema object as it appears in the bundled document. */
export type SchemaObject = Record<string, unknown>;

/** How a value given on the command line is read. */
export type ValueKind = 'string' | 'integer' | 'number' | 'boolean' | 'map' | 'json';

/**
 * The kind of a (resolved) schema, and its enum values when it has them.
 *
 * @example
 * kindOf({ type: 'integer' }); // { kind: 'integer' }
 * kindOf({ type: 'object', additionalProperties: { type: 'string' } }); // { kind: 'map' }
 */
export function kindOf(schema: SchemaObject): { kind: ValueKind; choices?: string[] } {
  const types = Array.isArray(schema.type)
    ? (schema.type as string[]).filter((t) => t !== 'null')
    : [schema.type];
  const type = types[0];
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string'))
    return { kind: 'string', choices: schema.enum as string[] };
  if (type === 'string' || type === 'integer' || type === 'number' || type === 'boolean')
    return { kind: type };
  // A map: values under additionalProperties, or under patternProperties (how Labels constrains its keys).
  const values =
    typeof schema.additionalProperties === 'object' ? schema.additionalProperties : schema.patternProperties;
  if (type === 'object' && values && typeof values === 'object' && !schema.properties) return { kind: 'map' };
  return { kind: 'json' };
}

/**
 * The first sentence-ish line of a description, for one-line help.
 *
 * @example
 * firstLine('Page size: at most 50. More.'); // 'Page size: at most 50.'
 */
export function firstLine(text: unknown): string {
  if (typeof text !== 'string') return '';
  const paragraph = (text.split(/\n\s*\n/)[0] ?? '').replace(/\s+/g, ' ').trim();
  const end = paragraph.search(/\.(\s|$)/);
  return end >= 0 ? paragraph.slice(0, end + 1) : paragraph;
}
