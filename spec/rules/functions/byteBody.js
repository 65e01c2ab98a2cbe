import { BYTE_RESPONSE_HEADERS, byteMediaTypeOf, MAX_BYTES_EXTENSION } from '../lib/bytes.js';
import { isObject, operations } from '../lib/openapi.js';
import { BYTE_VERBS } from '../lib/verbs.js';

/** The statuses an upload answers when its body is refused: too large, and not the declared type. */
const UPLOAD_REFUSALS = ['413', '415'];

/**
 * svc-byte-body: a body of a byte media type (rules/lib/bytes.js: `application/octet-stream`,
 * `application/x-tar`) follows the byte-bodies design: it is the request body of a PUT whose
 * operationId starts with `upload` (a file) or of a POST whose operationId starts with `send` (bytes
 * written to a running program, `sendComputerTerminalInput`), or the 200 of a GET whose operationId starts
 * with `download`
 * (rules/lib/verbs.js), never an error response (errors are the JSON envelope); its schema is `type:
 * string, format: binary`; an upload's schema declares `x-svc-max-bytes`, a positive integer, and the
 * upload answers 413 (too large) and 415 (another media type); a download's 200 declares the headers
 * its media type has (`Content-Length` and `ETag` for a file; an archive, made as it is sent, none).
 */
export default function byteBody(doc) {
  const results = [];
  for (const op of operations(doc)) {
    const { method, operation } = op;
    const label = `${method.toUpperCase()} ${op.path}`;
    const say = (path, message) => results.push({ message: `${label}: ${message}`, path });
    const id = String(operation.operationId ?? '');
    const startsWith = (verb) => new RegExp(`^${verb}[A-Z]`).test(id);

    const requestType = byteMediaTypeOf(operation.requestBody);
    if (requestType !== undefined) {
      const at = [...op.at, 'requestBody', 'content', requestType];
      const verb = method === 'post' ? BYTE_VERBS.send : BYTE_VERBS.upload;
      if (method !== 'put' && method !== 'post')
        say(
          at,
          `a byte request body (${requestType}) is an upload's (a PUT) or a send's (a POST), not a ${method.toUpperCase()}'s.`,
        );
      else if (!startsWith(verb))
        say(
          [...op.at, 'operationId'],
          `a ${method.toUpperCase()} taking bytes starts with \`${verb}\`, not \`${id}\`.`,
        );
      const schema = operation.requestBody.content[requestType]?.schema;
      schemaProblems(schema, [...at, 'schema'], say);
      const max = schema?.[MAX_BYTES_EXTENSION];
      if (!Number.isSafeInteger(max) || max <= 0)
        say(
          [...at, 'schema'],
          `a byte request body declares the most bytes it may carry: \`${MAX_BYTES_EXTENSION}\`, a positive integer (413 above it).`,
        );
      const responses = isObject(operation.responses) ? operation.responses : {};
      const missing = UPLOAD_REFUSALS.filter((status) => !(status in responses));
      if (missing.length > 0)
        say(
          [...op.at, 'responses'],
          `an upload answers ${missing.join(' and ')} (${missing.map((s) => (s === '413' ? 'a body over its limit' : 'another media type')).join('; ')}).`,
        );
    }

    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const type = byteMediaTypeOf(response);
      if (type === undefined) continue;
      const at = [...op.at, 'responses', status, 'content', type];
      if (method !== 'get' || status !== '200') {
        say(
          at,
          /^[45]/.test(status) || status === 'default'
            ? `an error response is the JSON error envelope, never bytes (${type}).`
            : `bytes (${type}) are the 200 of a GET (a download), not of ${method.toUpperCase()} ${status}.`,
        );
        continue;
      }
      if (!startsWith(BYTE_VERBS.download))
        say(
          [...op.at, 'operationId'],
          `a GET answering bytes starts with \`${BYTE_VERBS.download}\`, not \`${id}\`.`,
        );
      schemaProblems(response.content[type]?.schema, [...at, 'schema'], say);
      const declared = new Set(
        Object.keys(isObject(response.headers) ? response.headers : {}).map((h) => h.toLowerCase()),
      );
      const wanted = BYTE_RESPONSE_HEADERS[type] ?? [];
      const absent = wanted.filter((header) => !declared.has(header.toLowerCase()));
      if (absent.length > 0)
        say(
          [...op.at, 'responses', status],
          `a download of ${type} declares ${wanted.join(' and ')} (a file's size and version are known before its first byte); missing ${absent.join(', ')}.`,
        );
    }
  }
  return results;
}

/** A byte body's schema is `type: string, format: binary`: the content is the bytes, nothing else. */
function schemaProblems(schema, at, say) {
  if (isObject(schema) && schema.type === 'string' && schema.format === 'binary') return;
  say(at, "a byte body's schema is `type: string, format: binary` (the content is the bytes, not JSON).");
}
