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

/**
 * The events of a stream operation in a bundle (local `$ref`s kept): its item schema's name and, per
 * `oneOf` branch, the event names (`const` or `enum`) and the components schema of their data
 * (`data.contentSchema.$ref`). For the docs build, which runs before any package is built; the
 * packages read streams with `eventStream` of @svc/contract.
 *
 * @param {Record<string, any>} doc a bundled document
 * @param {Record<string, any>} operation one of its operations
 * @returns {{ itemSchema: string, events: { names: string[], dataSchema: string }[] } | undefined}
 */
export function streamEventsOf(doc, operation) {
  const name = (ref) => (typeof ref === 'string' ? ref.replace('#/components/schemas/', '') : undefined);
  const local = (node) =>
    typeof node?.$ref === 'string' ? doc.components?.schemas?.[name(node.$ref)] : node;
  const ok = local(operation?.responses?.['200']);
  const schema = local(ok?.content?.[EVENT_STREAM]?.schema);
  const itemSchema = name(schema?.items?.$ref);
  if (itemSchema === undefined) return undefined;
  const events = (local(schema.items).oneOf ?? []).map((raw) => {
    const branch = local(raw);
    const event = branch?.properties?.event ?? {};
    const names = typeof event.const === 'string' ? [event.const] : (event.enum ?? []);
    return { names, dataSchema: name(branch?.properties?.data?.contentSchema?.$ref) ?? '(inline)' };
  });
  return { itemSchema, events };
}
