// What a byte body is, for both linters, the breaking-change gate and the docs build (the packages read
// the same facts with `byteRequestBody` / `byteResponse` of @svc/contract): a request or response body
// whose media type carries bytes, never JSON (a file as `application/octet-stream`, a directory as an
// uncompressed tar, `application/x-tar`, a screenshot as `image/png`). Its schema is `type: string,
// format: binary` (OpenAPI 3.1: the content is the bytes; 3.2 says the same with an empty schema); a
// request body's schema bounds it with `x-svc-max-bytes`. Only three places may hold one: the request
// body of a PUT upload (operationId `upload…`, lib/verbs.js) or of a POST send (`send…`: bytes into a
// running program, a terminal's input) and the 200 of a GET download (`download…`). svc-byte-body holds them to
// that shape.
import { isObject } from './openapi.js';

/**
 * The media types that carry bytes: a file, a directory as an uncompressed tar archive, and a picture of
 * a computer's screen.
 */
export const BYTE_MEDIA_TYPES = Object.freeze(['application/octet-stream', 'application/x-tar', 'image/png']);

/** The vendor extension on a byte request body's schema: the most bytes one request may carry. */
export const MAX_BYTES_EXTENSION = 'x-svc-max-bytes';

/**
 * The headers a byte 200 declares, per media type: a file's size and version are known before the first
 * byte (`Content-Length`, `ETag`); an archive is made as it is sent, so it declares neither.
 */
export const BYTE_RESPONSE_HEADERS = Object.freeze({
  'application/octet-stream': Object.freeze(['Content-Length', 'ETag']),
  'application/x-tar': Object.freeze([]),
  // A screenshot is taken whole before it is sent; it is new on every call, so it has no version.
  'image/png': Object.freeze(['Content-Length']),
});

/** Whether a media type carries bytes. */
export function isByteMediaType(type) {
  return BYTE_MEDIA_TYPES.includes(type);
}

/** The byte media type of a request body or response (its `content`), or undefined. */
export function byteMediaTypeOf(holder) {
  return isObject(holder?.content) ? Object.keys(holder.content).find(isByteMediaType) : undefined;
}

/**
 * Whether an operation takes bytes: its request body's content is a byte media type. `resolve` follows a
 * `$ref` (Redocly's sources keep them; Spectral's resolved document has none).
 *
 * @param {Record<string, any>} operation
 * @param {(node: unknown) => unknown} [resolve]
 */
export function isUploadOperation(operation, resolve = (node) => node) {
  return byteMediaTypeOf(resolve(operation?.requestBody)) !== undefined;
}

/**
 * Whether an operation answers bytes: it is a GET and its 200's content is a byte media type.
 *
 * @param {string} method
 * @param {Record<string, any>} operation
 * @param {(node: unknown) => unknown} [resolve]
 */
export function isDownloadOperation(method, operation, resolve = (node) => node) {
  if (method !== 'get' || !isObject(operation?.responses)) return false;
  return byteMediaTypeOf(resolve(operation.responses['200'])) !== undefined;
}

/**
 * Every byte body of a resolved or bundled document (local `$ref`s followed), where it is written in the
 * operation: `{ path, method, operationId, at: JSON path of its media type object, mediaType, schema,
 * maxBytes, headers (a response's) }`. For the gate and the docs build, which run before any package
 * is built.
 *
 * @param {Record<string, any>} doc
 */
export function byteBodies(doc) {
  const local = (node) => {
    if (typeof node?.$ref !== 'string' || !node.$ref.startsWith('#/')) return node;
    return node.$ref
      .slice(2)
      .split('/')
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((n, key) => n?.[key], doc);
  };
  const bodies = [];
  for (const [path, pathItem] of Object.entries(isObject(doc?.paths) ? doc.paths : {})) {
    for (const [method, operation] of Object.entries(isObject(pathItem) ? pathItem : {})) {
      if (!isObject(operation?.responses)) continue;
      const holders = [['requestBody', local(operation.requestBody)]];
      for (const [status, response] of Object.entries(operation.responses))
        holders.push([`responses/${status}`, local(response)]);
      for (const [where, holder] of holders) {
        const mediaType = byteMediaTypeOf(holder);
        if (mediaType === undefined) continue;
        const schema = local(holder.content[mediaType]?.schema);
        const max = schema?.[MAX_BYTES_EXTENSION];
        bodies.push({
          path,
          method,
          operationId: operation.operationId,
          at: ['paths', path, method, ...where.split('/'), 'content', mediaType],
          mediaType,
          schema,
          maxBytes: typeof max === 'number' ? max : undefined,
          headers: where === 'requestBody' ? undefined : Object.keys(holder.headers ?? {}),
        });
      }
    }
  }
  return bodies;
}
