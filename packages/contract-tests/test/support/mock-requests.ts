// A valid request for every operation, built from the spec alone: each parameter's example, each
// request body's first example. What the mock must then answer with a response that fits the spec.
import {
  byteRequestBody,
  byteResponse,
  requestBody as declaredBody,
  deref,
  isStreamOperation,
  operationParameters,
  responseFor,
} from '@svc/contract';
import { document, type IndexedOperation, OPERATIONS } from './spec-index.js';

type Node = Record<string, unknown>;

const resolve = (node: unknown): Node => deref(document, node);

/** The first example a parameter, schema or media type carries. */
function exampleOf(node: Node): unknown {
  if ('example' in node) return node.example;
  const examples = node.examples;
  if (Array.isArray(examples)) return examples[0];
  if (examples && typeof examples === 'object') return resolve(Object.values(examples)[0]).value;
  const schema = node.schema ? resolve(node.schema) : undefined;
  return schema ? exampleOf(schema) : undefined;
}

/** One request of the spec: method, path with its parameters filled in, headers, body. */
export interface MockRequest {
  op: IndexedOperation;
  path: string;
  init: { method: string; headers: Record<string, string>; body?: string };
}

/** A request for `op` that the mock's request validation accepts. */
export function exampleRequest(op: IndexedOperation): MockRequest {
  const params = operationParameters(document, op).filter((p) => p.required === true || p.in === 'path');
  let path = op.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {
    Authorization: 'Bearer mock-access-token',
    // What the operation answers: JSON, or an event stream (Prism refuses a stream asked as JSON: 406).
    // A download asks for its bytes' media type.
    Accept: isStreamOperation(document, op)
      ? 'text/event-stream'
      : (byteResponse(document, op.operationId)?.mediaType ?? 'application/json'),
  };
  for (const param of params) {
    const value = exampleOf(param);
    if (value === undefined)
      throw new Error(`${op.operationId}: parameter ${String(param.name)} has no example`);
    if (param.in === 'path')
      path = path.replace(`{${String(param.name)}}`, encodeURIComponent(String(value)));
    else if (param.in === 'query') query.set(String(param.name), String(value));
    else if (param.in === 'header') headers[String(param.name)] = String(value);
  }
  const init: MockRequest['init'] = { method: op.method.toUpperCase(), headers };
  const requestBody = declaredBody(document, op);
  if (requestBody) {
    const [mediaType, media] = Object.entries(requestBody.content)[0] as [string, Node];
    headers['Content-Type'] = mediaType;
    // A byte body's example is its bytes (ASCII text in the spec), sent as they are, not as JSON.
    const example = exampleOf(media);
    init.body =
      byteRequestBody(document, op.operationId) !== undefined && typeof example === 'string'
        ? example
        : JSON.stringify(example ?? {});
  }
  return { op, path: query.size ? `${path}?${query}` : path, init };
}

/** One valid request per operation of the spec, in spec order. */
export const EXAMPLE_REQUESTS: readonly MockRequest[] = OPERATIONS.map(exampleRequest);

/**
 * What breaks the response headers the spec declares for this status: a required header missing, or a
 * header whose value does not fit its schema (numbers compared as numbers).
 */
export function headerViolations(
  op: IndexedOperation,
  status: number,
  headers: Headers,
  validate: (schema: Node, value: unknown) => string | undefined,
): string[] {
  const declared = responseFor(document, op, status);
  const problems: string[] = [];
  for (const [name, header] of Object.entries(declared?.headers ?? {})) {
    const raw = headers.get(name);
    if (raw === null) {
      if (header.required === true) problems.push(`header ${name} is required but missing`);
      continue;
    }
    const schema = resolve(header.schema);
    const numeric = schema.type === 'integer' || schema.type === 'number';
    const value = numeric && /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    const problem = validate(schema, value);
    if (problem) problems.push(`header ${name}: ${JSON.stringify(raw)} ${problem}`);
  }
  return problems;
}
