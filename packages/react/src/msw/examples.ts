// Answers taken from the spec: a documented status, one of its named examples, and the headers the
// response requires, each from its own example. A body is the example of the media type the response
// declares: JSON, an event stream (its events in the SSE wire format) or bytes (the example's string).
import {
  BYTE_MEDIA_TYPES,
  deref,
  EVENT_STREAM,
  listOperations,
  type OpenApiDocument,
  type OperationInfo,
  operationResponses,
} from '@svc/contract/browser';

/** Which documented answer to give: a status the operation documents, a named example, a delay. */
export interface Choice<Status = number> {
  /** A status the operation documents. Default: its success status (the first 2xx). */
  status?: Status;
  /** A name under the response's `examples`. Default: the first one, as Prism answers. */
  example?: string;
  /** Milliseconds to wait before answering, or `'infinite'` (a request that never ends). */
  delay?: number | 'infinite';
}

/** One answer: what `HttpResponse` is built from. */
export interface Answer {
  status: number;
  /** JSON; for an event stream its events (`{ event, id, data }`), for bytes the example's string. */
  body: unknown;
  headers: Record<string, string>;
}

/**
 * The answer a choice names for an operation. Throws, listing what the spec documents, for a status or
 * an example it does not have, so a test that asks for one fails at once.
 *
 * @example
 * import { exampleAnswer } from '@svc/react/msw';
 * import { BUNDLED_DOCUMENT } from '@svc/react/msw';
 * exampleAnswer(BUNDLED_DOCUMENT, 'getComputer', { example: 'creating' }).body; // { computer: { state: 'creating', … } }
 */
export function exampleAnswer(document: OpenApiDocument, operationId: string, choice: Choice = {}): Answer {
  const op = operationById(document, operationId);
  const responses = operationResponses(document, op);
  const response =
    choice.status === undefined
      ? responses.find((r) => /^2\d\d$/.test(r.status))
      : responses.find((r) => r.status === String(choice.status));
  if (!response) {
    throw new Error(
      `${operationId} documents no ${choice.status ?? '2xx'} answer; it documents ${responses.map((r) => r.status).join(', ')}`,
    );
  }
  const status = Number(response.status);
  const content = (response.response.content ?? {}) as Record<string, { examples?: Record<string, unknown> }>;
  const mediaType = 'application/json' in content ? 'application/json' : Object.keys(content)[0];
  const examples = (mediaType === undefined ? undefined : content[mediaType]?.examples) ?? {};
  const names = Object.keys(examples);
  const name = choice.example ?? names[0];
  if (choice.example !== undefined && !names.includes(choice.example)) {
    throw new Error(
      `${operationId} ${status} has no example "${choice.example}"; its examples: ${names.join(', ') || 'none'}`,
    );
  }
  const body = name === undefined ? undefined : deref<{ value?: unknown }>(document, examples[name]).value;
  const headers: Record<string, string> = {};
  if (body !== undefined && mediaType !== undefined) headers['Content-Type'] = mediaType;
  for (const [header, spec] of Object.entries(response.headers)) {
    const value = headerExample(document, spec);
    if (value !== undefined && (spec.required === true || header === 'Request-Id')) headers[header] = value;
  }
  if (typeof body === 'string' && (BYTE_MEDIA_TYPES as readonly string[]).includes(mediaType ?? '')) {
    // Bytes: their headers describe these bytes, so they are computed, not taken from an example.
    const size = new TextEncoder().encode(body).byteLength;
    const declared = Object.keys(response.headers).map((h) => h.toLowerCase());
    if (declared.includes('content-length')) headers['Content-Length'] = String(size);
    if (declared.includes('etag')) headers.ETag = `W/"${size}-${EXAMPLE_MTIME}"`;
  }
  return { status, body, headers };
}

/** The modification time the examples' files have (2026-11-10T12:00:05Z, as `pnpm mock`'s), in seconds. */
const EXAMPLE_MTIME = 1794312005;

/**
 * The text of an answer's body as sent: JSON, the SSE wire format of an event stream's events (WHATWG
 * HTML §9.2.5), or a byte body's string; null for none.
 */
export function answerText(answer: Answer): string | null {
  if (answer.body === undefined) return null;
  const type = answer.headers['Content-Type'] ?? '';
  if (type.startsWith(EVENT_STREAM) && Array.isArray(answer.body))
    return (answer.body as { event: string; id: string; data: string }[])
      .map(({ event, id, data }) => `id: ${id}\nevent: ${event}\ndata: ${data}\n\n`)
      .join('');
  if (typeof answer.body === 'string' && !type.startsWith('application/json')) return answer.body;
  return JSON.stringify(answer.body);
}

/** The example value of a header object: its own `example`, else its schema's (or its one allowed value). */
function headerExample(document: OpenApiDocument, header: Record<string, unknown>): string | undefined {
  const schema = header.schema === undefined ? {} : deref<Record<string, unknown>>(document, header.schema);
  const value =
    header.example ??
    schema.example ??
    (Array.isArray(schema.examples) ? schema.examples[0] : undefined) ??
    schema.const ??
    (Array.isArray(schema.enum) && schema.enum.length === 1 ? schema.enum[0] : undefined) ??
    schema.default;
  return value === undefined ? undefined : String(value);
}

const byDocument = new WeakMap<OpenApiDocument, Map<string, OperationInfo>>();

/**
 * The operation of an `operationId`; throws for one the document does not have.
 *
 * @example
 * import { BUNDLED_DOCUMENT, operationById } from '@svc/react/msw';
 * operationById(BUNDLED_DOCUMENT, 'listComputers').path; // '/workspaces/{workspace}/computers'
 */
export function operationById(document: OpenApiDocument, operationId: string): OperationInfo {
  let index = byDocument.get(document);
  if (!index) {
    index = new Map(listOperations(document).map((op) => [op.operationId, op]));
    byDocument.set(document, index);
  }
  const op = index.get(operationId);
  if (!op) throw new Error(`the document has no operation ${operationId}`);
  return op;
}

/**
 * The choice a request's `Prefer` header makes, as the Prism mock reads it: `Prefer: code=409,
 * example=computer_already_exists`.
 *
 * @example
 * import { preferred } from '@svc/react/msw';
 * preferred('code=404'); // { status: 404 }
 */
export function preferred(header: string | null): Choice {
  const choice: Choice = {};
  for (const part of (header ?? '').split(',')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    if (key === 'code' && value) choice.status = Number(value);
    if (key === 'example' && value) choice.example = value;
  }
  return choice;
}
