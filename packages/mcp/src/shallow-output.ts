import { derefWithRef, type OpenApiDocument, type OperationInfo, operationResponses } from '@svc/contract';
import { withReadBack } from './read-back.js';
import { inlineRefs, type JsonSchema } from './schema.js';
import { strictSchema } from './strict.js';

const SCHEMA_PREFIX = '#/components/schemas/';

/** A schema without its `description`s and `examples` (annotations, not constraints). */
function withoutDescriptions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !((key === 'description' && typeof value === 'string') || key === 'examples'))
      .map(([key, value]) => [key, withoutDescriptions(value)]),
  );
}

/** Follows `$ref`s of a schema to what they name; also returns the shared schema's name. */
function follow(document: OpenApiDocument, value: unknown): { node: JsonSchema; name?: string } {
  const { value: node, ref } = derefWithRef(document, value);
  return ref?.startsWith(SCHEMA_PREFIX) ? { node, name: ref.slice(SCHEMA_PREFIX.length) } : { node };
}

/**
 * One property of a success body: a shared schema (or an array of one) becomes its type and a
 * reference by `title` (the schema is a resource, `svc://schemas/<title>`); anything else is inlined.
 * No descriptions: what a result holds is the tool's description's to say, and the spec's prose about
 * each field (the same few sentences on every long-running tool: "The operations started by this
 * call…") is in the full mode and the resources.
 */
function shallowProperty(document: OpenApiDocument, raw: unknown): JsonSchema {
  const { node, name } = follow(document, raw);
  // The type stays (as `anyOf` for a type list, which strict validators want): a bare `{title}`
  // would accept anything. The rest of a shared schema's constraints are in its resource.
  const type = Array.isArray(node.type)
    ? { anyOf: (node.type as string[]).map((name) => ({ type: name })) }
    : typeof node.type === 'string'
      ? { type: node.type }
      : {};
  if (name !== undefined) return { ...type, title: name };
  if (node.type === 'array') {
    const items = follow(document, node.items);
    if (items.name !== undefined)
      return {
        type: 'array',
        items: {
          ...(typeof items.node.type === 'string' ? { type: items.node.type } : {}),
          title: items.name,
        },
      };
  }
  return withoutDescriptions(inlineRefs(document, node)) as JsonSchema;
}

/**
 * The compact output schema of an operation: its success body's top-level properties, with objects of
 * shared schemas named by `title` instead of repeated in every tool (the full schemas are MCP resources
 * `svc://schemas/<Name>`, and in the `full` mode's output schemas). Errors are not a branch: a refused
 * call is `isError` with the error envelope as text, described once in the server's instructions.
 * Undefined when success has no body (204).
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'getComputer');
 * if (op) shallowOutputSchema(doc, op); // { type: 'object', properties: { computer: { type: 'object', title: 'Computer' } }, … }
 */
export function shallowOutputSchema(
  document: OpenApiDocument,
  op: OperationInfo,
  readBack?: OperationInfo,
): (JsonSchema & { type: 'object' }) | undefined {
  const read = readBack ? shallowOutputSchema(document, readBack) : undefined;
  const bodies: JsonSchema[] = [];
  for (const { status, schema } of operationResponses(document, op)) {
    if (!/^2/.test(status) || schema === undefined) continue;
    const { node } = follow(document, schema);
    const properties = (node.properties ?? {}) as Record<string, unknown>;
    bodies.push({
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, shallowProperty(document, value)]),
      ),
      ...(Array.isArray(node.required) ? { required: node.required } : {}),
    });
  }
  if (bodies.length === 0) return undefined;
  const merged = bodies.map((body) => withReadBack(body, read));
  const [only] = merged;
  return strictSchema(
    merged.length === 1 && only ? only : { type: 'object', anyOf: merged },
  ) as JsonSchema & {
    type: 'object';
  };
}
