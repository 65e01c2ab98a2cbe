// A valid request for every operation, built from the spec alone: each parameter's example, each
// request body's first example. What a mock (Prism's, the MSW kit's) must then answer with a response
// that fits the spec (validate.ts).
import {
  requestBody as declaredBody,
  deref,
  EVENT_STREAM,
  listOperations,
  loadDocument,
  type OperationInfo,
  type OperationKind,
  operationKind,
  operationParameters,
} from '@svc/contract';

const document = loadDocument();

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

/**
 * What a request of the operation's kind (`operationKind`) asks for and sends: the one place the
 * examples tell the kinds apart. It accepts what the operation answers: JSON, an event stream (Prism
 * refuses a stream asked as JSON: 406), a download's media type. A body of bytes is its example as it
 * is (ASCII text in the spec), not as JSON.
 */
function byKind(kind: OperationKind): { accept: string; bytesIn: boolean } {
  switch (kind.kind) {
    case 'json':
    case 'long-running':
      return { accept: 'application/json', bytesIn: false };
    case 'event-stream':
      return { accept: EVENT_STREAM, bytesIn: false };
    case 'bytes-in':
      return { accept: 'application/json', bytesIn: true };
    case 'bytes-out':
      return { accept: kind.body.mediaType, bytesIn: false };
  }
}

/** One request of the spec: method, path with its parameters filled in, headers, body. */
export interface MockRequest<Op extends OperationInfo = OperationInfo> {
  op: Op;
  path: string;
  init: { method: string; headers: Record<string, string>; body?: string };
}

/**
 * A request for `op` that the mock's request validation accepts: path relative to the base URL.
 *
 * @example
 * const op = listOperations(loadDocument()).find((o) => o.operationId === 'getMe')!;
 * const { path, init } = exampleRequest(op);
 * await fetch(`http://127.0.0.1:4010${path}`, init); // pnpm mock
 */
export function exampleRequest<Op extends OperationInfo>(op: Op): MockRequest<Op> {
  const params = operationParameters(document, op).filter((p) => p.required === true || p.in === 'path');
  let path = op.path;
  const query = new URLSearchParams();
  const { accept, bytesIn } = byKind(operationKind(document, op));
  const headers: Record<string, string> = { Authorization: 'Bearer mock-access-token', Accept: accept };
  for (const param of params) {
    const value = exampleOf(param);
    if (value === undefined)
      throw new Error(`${op.operationId}: parameter ${String(param.name)} has no example`);
    if (param.in === 'path')
      path = path.replace(`{${String(param.name)}}`, encodeURIComponent(String(value)));
    else if (param.in === 'query') query.set(String(param.name), String(value));
    else if (param.in === 'header') headers[String(param.name)] = String(value);
  }
  const init: MockRequest<Op>['init'] = { method: op.method.toUpperCase(), headers };
  const requestBody = declaredBody(document, op);
  if (requestBody) {
    const [mediaType, media] = Object.entries(requestBody.content)[0] as [string, Node];
    headers['Content-Type'] = mediaType;
    const example = exampleOf(media);
    init.body = bytesIn && typeof example === 'string' ? example : JSON.stringify(example ?? {});
  }
  return { op, path: query.size ? `${path}?${query}` : path, init };
}

/** One valid request per operation of the spec, in spec order. */
export const EXAMPLE_REQUESTS: readonly MockRequest[] = listOperations(document).map(exampleRequest);
