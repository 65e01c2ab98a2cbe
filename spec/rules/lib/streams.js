// What a stream operation is, for both linters: a GET whose 200 answers Server-Sent Events
// (`text/event-stream`). Its operationId starts with the stream verb (lib/verbs.js), its last path
// segment may be a singular noun (`/operations/{operation}/output`: what is streamed, not an action),
// it may need a workspace permission above `read` (svc-policy), and svc-event-stream holds its response
// to the SSE shape.
import { isObject } from './openapi.js';

/** The media type of Server-Sent Events (WHATWG HTML §9.2). */
export const EVENT_STREAM = 'text/event-stream';

/** The event a stream sends last when the server ends it, saying why (the streams design brief). */
export const STREAM_ENDED = 'stream.ended';

/**
 * Whether an operation is a stream operation. `resolve` follows a `$ref` (Redocly's sources keep them;
 * Spectral's resolved document has none).
 *
 * @param {string} method
 * @param {Record<string, any>} operation
 * @param {(node: unknown) => unknown} [resolve]
 */
export function isStreamOperation(method, operation, resolve = (node) => node) {
  if (method !== 'get' || !isObject(operation?.responses)) return false;
  const ok = resolve(operation.responses['200']);
  return isObject(ok) && isObject(ok.content) && EVENT_STREAM in ok.content;
}

/**
 * The item schemas of every stream operation's 200 response in a resolved document (the `items` of its
 * `type: array` schema, or the schema itself when it is not an array, which svc-event-stream refuses),
 * as objects: Spectral's resolved document shares them with `components`.
 */
export function streamItemSchemas(doc) {
  const items = new Set();
  for (const pathItem of Object.values(isObject(doc?.paths) ? doc.paths : {})) {
    const operation = pathItem?.get;
    if (!isStreamOperation('get', operation)) continue;
    const schema = operation.responses['200'].content[EVENT_STREAM]?.schema;
    const item = isObject(schema?.items) ? schema.items : schema;
    if (isObject(item)) items.add(item);
  }
  return items;
}
