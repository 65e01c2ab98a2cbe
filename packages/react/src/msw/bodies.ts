// What the stateful mode checks of a JSON request body before it keeps anything of it, read from the
// operation's request schema: the body is an object, its required fields are there, it has no field the
// schema does not allow, and each top-level field has the schema's JSON type and, for a string, its
// length, pattern and enum. A shallow check, not JSON Schema (the kit carries no validator): enough that
// what the mock stores and answers back keeps the resource's types. Deeper values are kept as sent.
import {
  deref,
  type JsonObject,
  type OpenApiDocument,
  type OperationInfo,
  requestBody,
} from '@svc/contract/browser';

/** One bad value, as `details.field_violations` carries it. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** Whether an operation takes a JSON body (not bytes, not nothing). */
export function takesJson(document: OpenApiDocument, op: OperationInfo): boolean {
  return requestBody(document, op)?.content['application/json'] !== undefined;
}

const typeOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : Number.isInteger(value)
        ? 'integer'
        : typeof value;

const fits = (value: unknown, type: unknown): boolean => {
  const types = (Array.isArray(type) ? type : [type]) as string[];
  const actual = typeOf(value);
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
};

/**
 * The violations of a JSON request body, shallowly (see the top of this file); none for an operation
 * without a JSON body.
 *
 * @example
 * bodyViolations(document, operationById(document, 'createWorkspace'), {});
 * // [{ field: 'name', description: 'is required' }]
 */
export function bodyViolations(
  document: OpenApiDocument,
  op: OperationInfo,
  body: unknown,
): FieldViolation[] {
  const declared = requestBody(document, op);
  if (!declared || !takesJson(document, op) || declared.schema === undefined) return [];
  if (body === undefined)
    return declared.required ? [{ field: 'body', description: 'a JSON body is required' }] : [];
  const schema = deref(document, declared.schema);
  if (schema.type !== undefined && !fits(body, schema.type))
    return [{ field: 'body', description: `must be ${String(schema.type)}` }];
  if (typeOf(body) !== 'object') return [];
  const given = body as Record<string, unknown>;
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const violations: FieldViolation[] = [];
  for (const field of (schema.required ?? []) as string[])
    if (!(field in given)) violations.push({ field, description: 'is required' });
  for (const [field, value] of Object.entries(given)) {
    const property = properties[field];
    if (!property) {
      if (schema.additionalProperties === false) violations.push({ field, description: 'is not allowed' });
      continue;
    }
    const problem = valueProblem(deref(document, property), value);
    if (problem) violations.push({ field, description: problem });
  }
  return violations.slice(0, 100);
}

function valueProblem(schema: JsonObject, value: unknown): string | undefined {
  if (schema.type !== undefined && !fits(value, schema.type)) return `must be ${String(schema.type)}`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    return `must be one of ${schema.enum.join(', ')}`;
  if (typeof value !== 'string') return undefined;
  const length = [...value].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength)
    return `must be at least ${schema.minLength} characters`;
  if (typeof schema.maxLength === 'number' && length > schema.maxLength)
    return `must be at most ${schema.maxLength} characters`;
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value))
    return `must match ${schema.pattern}`;
  return undefined;
}
