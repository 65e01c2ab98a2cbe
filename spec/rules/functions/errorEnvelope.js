import { jsonMedia, objectShape, responses } from '../lib/openapi.js';

const FIELDS = ['code', 'message', 'details', 'request_id'];

/**
 * svc-error-envelope: every error response (4xx, 5xx, 4XX, 5XX, default) has an application/json body
 * `{"error": {"code", "message", "details", "request_id"}}` with all four fields required (conventions §7).
 */
export default function errorEnvelope(doc) {
  const results = [];
  for (const r of responses(doc)) {
    if (!/^([45]\d\d|[45]XX|default)$/i.test(r.status)) continue;
    const json = jsonMedia(r.response);
    if (json === undefined) {
      results.push({
        message: `Error response ${r.status} must have an application/json body {"error": {code, message, details, request_id}}.`,
        path: r.at,
      });
      continue;
    }
    const problem = errorProblem(objectShape(json.media?.schema));
    if (problem !== undefined) {
      results.push({
        message: `An error response must be {"error": {code, message, details, request_id}} with all four required: ${problem}.`,
        path: [...r.at, 'content', json.key, 'schema'],
      });
    }
  }
  return results;
}

function errorProblem(shape) {
  if (shape === undefined) return 'the body is not an object schema';
  if (!('error' in shape.properties)) return '`error` is missing';
  if (!shape.required.includes('error')) return '`error` is not required';
  const inner = objectShape(shape.properties.error);
  if (inner === undefined || inner.nullable) return '`error` is not an object';
  const missing = FIELDS.filter((f) => !(f in inner.properties));
  if (missing.length > 0) return `\`error\` lacks ${missing.map((m) => `\`${m}\``).join(', ')}`;
  const optional = FIELDS.filter((f) => !inner.required.includes(f));
  if (optional.length > 0) return `\`error\` does not require ${optional.map((m) => `\`${m}\``).join(', ')}`;
  return undefined;
}
