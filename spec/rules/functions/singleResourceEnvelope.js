import { isDownloadOperation } from '../lib/bytes.js';
import {
  isListOperation,
  isPluralNoun,
  jsonMedia,
  matchesRoute,
  objectShape,
  responses,
} from '../lib/openapi.js';
import { isStreamOperation } from '../lib/streams.js';

/**
 * svc-single-resource-envelope: a 200/201 JSON response of an operation that is not a list holds one
 * resource as `{"<noun>": {...}}` (conventions §2 "Response envelope"): exactly one property, required,
 * named by a singular noun, holding an object. A stream operation's 200 (`text/event-stream`) is no
 * resource and is left to svc-event-stream; a download's 200 (bytes) is left to svc-byte-body.
 * Options: { statuses: string[], except: string[] ("GET /health": routes that return no resource) }.
 */
export default function singleResourceEnvelope(doc, options) {
  const { statuses = ['200', '201'], except = [] } = options ?? {};
  const results = [];
  for (const r of responses(doc)) {
    if (!statuses.includes(r.status) || matchesRoute(except, r) || isListOperation(r)) continue;
    // A stream's 200 is an event stream, not a resource: svc-event-stream holds it to its own shape.
    if (r.status === '200' && isStreamOperation(r.method, r.operation)) continue;
    // A download's 200 is bytes, not a resource: svc-byte-body holds it to its own shape.
    if (r.status === '200' && isDownloadOperation(r.method, r.operation)) continue;
    const json = jsonMedia(r.response);
    if (json === undefined) {
      results.push({
        message: `${r.status} response of \`${label(r)}\` must have an application/json body holding the resource.`,
        path: [...r.at, 'content'],
      });
      continue;
    }
    const path = [...r.at, 'content', json.key, 'schema'];
    const problem = envelopeProblem(objectShape(json.media?.schema));
    if (problem !== undefined) {
      results.push({
        message: `A single-resource response (200/201) must be an envelope {"<noun>": {...}}: ${problem}.`,
        path,
      });
    }
  }
  return results;
}

function envelopeProblem(shape) {
  if (shape === undefined) return 'the body is not an object schema';
  const names = Object.keys(shape.properties);
  if (names.length !== 1)
    return `it has ${names.length} properties (${names.join(', ') || 'none'}), expected exactly one`;
  const [noun] = names;
  if (noun === 'next_cursor' || noun === 'has_more') return `\`${noun}\` belongs to list envelopes`;
  if (isPluralNoun(noun)) return `\`${noun}\` looks plural; one resource is named by a singular noun`;
  if (!shape.required.includes(noun)) return `\`${noun}\` is not required`;
  const inner = objectShape(shape.properties[noun]);
  if (inner === undefined || inner.nullable) return `\`${noun}\` must hold the resource object`;
  return undefined;
}

const label = (r) => r.operation.operationId ?? `${r.method.toUpperCase()} ${r.path}`;
