// The byte bodies of the spec, read one way: which operations take or answer bytes instead of JSON
// (a file as `application/octet-stream`, a directory as `application/x-tar`, a screenshot as
// `image/png`), and the most bytes a request body may carry (`x-svc-max-bytes` on its schema). A byte
// body's schema is `type: string, format: binary`; the `svc-byte-body` lint rule holds every byte body to that shape.
import type { OpenApiDocument } from './document.js';
import { listOperations, type OperationInfo } from './operations.js';
import { deref, type JsonObject } from './refs.js';

/**
 * The media types that carry bytes, never JSON: a file, a directory as an uncompressed tar archive, and a
 * picture of a computer's screen.
 */
export const BYTE_MEDIA_TYPES = Object.freeze([
  'application/octet-stream',
  'application/x-tar',
  'image/png',
] as const);

/** One of {@link BYTE_MEDIA_TYPES}. */
export type ByteMediaType = (typeof BYTE_MEDIA_TYPES)[number];

/** The vendor extension on a byte request body's schema: the most bytes one request may carry. */
export const MAX_BYTES_EXTENSION = 'x-svc-max-bytes';

/** A byte body of an operation: its media type and, for a request body, its limit. */
export interface ByteBody {
  mediaType: ByteMediaType;
  /** `x-svc-max-bytes` of a request body's schema; undefined for a response, or when not declared. */
  maxBytes: number | undefined;
}

function isByteMediaType(type: string): type is ByteMediaType {
  return (BYTE_MEDIA_TYPES as readonly string[]).includes(type);
}

function byteBodyOf(document: OpenApiDocument, content: unknown): ByteBody | undefined {
  if (content === null || typeof content !== 'object') return undefined;
  const type = Object.keys(content).find(isByteMediaType);
  if (type === undefined) return undefined;
  const media = (content as Record<string, JsonObject>)[type];
  const schema = media?.schema === undefined ? undefined : deref(document, media.schema);
  const max = schema?.[MAX_BYTES_EXTENSION];
  return { mediaType: type, maxBytes: typeof max === 'number' ? max : undefined };
}

function find(document: OpenApiDocument, op: string | OperationInfo): OperationInfo {
  const info = typeof op === 'string' ? listOperations(document).find((o) => o.operationId === op) : op;
  if (info === undefined) throw new Error(`no operation ${String(op)} in the document`);
  return info;
}

/**
 * The byte request body of an operation (given by operationId or as listed); undefined when it takes
 * JSON or nothing.
 *
 * @example
 * import { byteRequestBody, loadDocument } from '@svc/contract';
 * byteRequestBody(loadDocument(), 'uploadComputerFile'); // { mediaType: 'application/octet-stream', maxBytes: 1073741824 }
 * byteRequestBody(loadDocument(), 'createComputer'); // undefined
 */
export function byteRequestBody(document: OpenApiDocument, op: string | OperationInfo): ByteBody | undefined {
  const info = find(document, op);
  if (info.operation.requestBody === undefined) return undefined;
  return byteBodyOf(document, deref(document, info.operation.requestBody).content);
}

/**
 * The byte body of an operation's 200 response; undefined when it answers JSON, a stream or nothing.
 *
 * @example
 * import { byteResponse, loadDocument } from '@svc/contract';
 * byteResponse(loadDocument(), 'downloadComputerArchive')?.mediaType; // 'application/x-tar'
 */
export function byteResponse(document: OpenApiDocument, op: string | OperationInfo): ByteBody | undefined {
  const info = find(document, op);
  const ok = (info.operation.responses as Record<string, unknown> | undefined)?.['200'];
  if (ok === undefined) return undefined;
  const body = byteBodyOf(document, deref(document, ok).content);
  return body === undefined ? undefined : { ...body, maxBytes: undefined };
}

/**
 * Whether an operation takes or answers bytes.
 *
 * @example
 * import { isByteOperation, loadDocument } from '@svc/contract';
 * isByteOperation(loadDocument(), 'getComputerFile'); // false: it answers JSON about the file
 */
export function isByteOperation(document: OpenApiDocument, op: string | OperationInfo): boolean {
  return byteRequestBody(document, op) !== undefined || byteResponse(document, op) !== undefined;
}

/**
 * The operationIds of every operation that takes or answers bytes, in spec order.
 *
 * @example
 * import { byteOperationIds, loadDocument } from '@svc/contract';
 * byteOperationIds(loadDocument()); // ['downloadComputerFile', 'uploadComputerFile', …]
 */
export function byteOperationIds(document: OpenApiDocument): string[] {
  return listOperations(document)
    .filter((op) => isByteOperation(document, op))
    .map((op) => op.operationId);
}

/**
 * What a byte request body is in the generated types (scripts/generate.mjs types `format: binary` so):
 * the bytes `fetch` sends as they are. Never a JS string, which would be sent as its UTF-8.
 *
 * @example
 * import type { ByteBodyInput } from '@svc/contract';
 * const body: ByteBodyInput = new Uint8Array([0, 1, 255]);
 */
export type ByteBodyInput = Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array>;

/**
 * What a byte response body is in the generated types: the stream `fetch` answers (`response.body`).
 * Reading it whole or as it comes is the client's transport.
 *
 * @example
 * import type { ByteBodyOutput } from '@svc/contract';
 * const read = (body: ByteBodyOutput) => new Response(body).arrayBuffer();
 */
export type ByteBodyOutput = ReadableStream<Uint8Array>;
