// The byte operations of the mock (rules/lib/bytes.js): uploads and downloads are answered by the
// front of tools/spec-mock.mjs, never with their bytes through Prism. Prism cannot answer a download
// (it generates no `Content-Length` and an `ETag` off its pattern, then refuses its own answer under
// `--errors`), and its validating proxy re-encodes a binary body as UTF-8 (stoplightio/prism#1321). So
// Prism only checks a byte request (security, parameters, `Prefer: code=…`), given a short placeholder
// body of the declared media type, and the front answers the bytes: the download's example in the spec
// (`Prefer: example=<name>`, else the first; its string's UTF-8, as the spec's byte examples are ASCII),
// else the mock's own few (a short text, or a tar archive of it), the same every time. A screen's
// picture (`image/png`) is always the mock's own: a PNG is no text, so no example in the spec can hold
// it.
import { crc32, deflateSync } from 'node:zlib';
import { byteBodies } from '../spec/rules/lib/bytes.js';

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The content of every file the mock answers, and of the one file of its archive. */
export const MOCK_FILE =
  'Hello from the Cloud Computer Service mock: these are the bytes of every file it answers.\n';

/** The modification time of the mock's file (2026-11-10T12:00:05Z, as the spec's examples), seconds. */
export const MOCK_MTIME = 1794312005;

/** The body Prism is given in place of an upload's bytes: it checks the request, not the bytes. */
export const PLACEHOLDER = Buffer.from('mock');

/** One tar header block (POSIX ustar) for `name`, `size` bytes, of `type` ('0' file, '5' directory). */
function tarHeader(name, size, type) {
  const block = Buffer.alloc(512);
  const put = (text, at, length) => block.write(text, at, length, 'ascii');
  const octal = (value, length) => `${value.toString(8).padStart(length - 1, '0')}\0`;
  put(name, 0, 100);
  put(octal(type === '5' ? 0o755 : 0o644, 8), 100, 8);
  put(octal(1000, 8), 108, 8);
  put(octal(1000, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(MOCK_MTIME, 12), 136, 12);
  put('        ', 148, 8);
  put(type, 156, 1);
  put('ustar\x0000', 257, 8);
  put('svc', 265, 32);
  put('svc', 297, 32);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return block;
}

/**
 * The mock's archive: an uncompressed ustar archive of the directory `mock/` holding `mock/hello.txt`
 * ({@link MOCK_FILE}), entry names starting with the directory's own name as the server writes them.
 */
export function mockArchive() {
  const content = Buffer.from(MOCK_FILE);
  const padding = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([
    tarHeader('mock/', 0, '5'),
    tarHeader('mock/hello.txt', content.length, '0'),
    content,
    padding,
    Buffer.alloc(1024),
  ]);
}

/** One PNG chunk: length, type, data, CRC-32 of type and data. */
function pngChunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * The mock's screen: a 1280x800 PNG (8-bit RGB) of one colour, the size of the spec's example screen
 * (`Screen-Width`, `Screen-Height`).
 */
export function mockScreen() {
  const [width, height] = [1280, 800];
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set([0x3a, 0x6e, 0xa5], 1 + x * 3);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * The bytes the mock answers for a download: its example named `example` (else its first), else the
 * mock's own for its media type (a file's text, or a tar archive of it); a picture is always the
 * mock's own ({@link mockScreen}).
 */
export function mockBytes(operation, example) {
  if (operation.mediaType === 'image/png') return mockScreen();
  const value = operation.examples?.[example] ?? Object.values(operation.examples ?? {})[0];
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return operation.mediaType === 'application/x-tar' ? mockArchive() : Buffer.from(MOCK_FILE);
}

/**
 * The byte operations of a bundle: for each, a matcher of its method and path, whether it takes or
 * answers bytes, its media type, an upload's limit, and a download's declared headers with the value
 * the mock sends (the header's example, else its schema's `const` or first example).
 *
 * @param {Record<string, any>} doc a bundled OpenAPI 3.1 document
 */
export function byteOperations(doc) {
  const local = (node) =>
    typeof node?.$ref === 'string'
      ? node.$ref
          .slice(2)
          .split('/')
          .reduce((at, key) => at?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc)
      : node;
  return byteBodies(doc)
    .filter((body) => body.at[3] === 'requestBody' || body.at[4] === '200')
    .map((body) => {
      const pattern = body.path
        .split(/(\{[^}]+\})/)
        .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : escapeRegExp(part)))
        .join('');
      const upload = body.at[3] === 'requestBody';
      const media = upload
        ? undefined
        : local(doc.paths[body.path][body.method].responses['200']).content[body.mediaType];
      const examples = Object.fromEntries(
        Object.entries(media?.examples ?? {}).map(([name, example]) => [name, local(example)?.value]),
      );
      const declared = upload
        ? {}
        : (local(doc.paths[body.path][body.method].responses['200']).headers ?? {});
      const headers = Object.fromEntries(
        Object.entries(declared).map(([name, raw]) => {
          const header = local(raw);
          const schema = local(header?.schema) ?? {};
          return [name, header?.example ?? schema.const ?? schema.examples?.[0] ?? schema.example];
        }),
      );
      return {
        operationId: body.operationId,
        method: body.method.toUpperCase(),
        path: new RegExp(`^${pattern}$`),
        kind: upload ? 'upload' : 'download',
        mediaType: body.mediaType,
        maxBytes: body.maxBytes,
        headers,
        examples,
      };
    });
}

/**
 * The headers of the mock's download: the declared ones with their examples, then the body's own
 * (`Content-Type`, `Content-Length`, a weak `ETag` of its size and time, as the spec writes it) where
 * the operation declares them.
 */
export function downloadHeaders(operation, body) {
  const headers = {};
  for (const [name, value] of Object.entries(operation.headers))
    if (value !== undefined) headers[name.toLowerCase()] = String(value);
  headers['content-type'] = operation.mediaType;
  const names = Object.keys(operation.headers).map((name) => name.toLowerCase());
  if (names.includes('content-length')) headers['content-length'] = String(body.length);
  else delete headers['content-length'];
  if (names.includes('etag')) headers.etag = `W/"${body.length}-${MOCK_MTIME}"`;
  return headers;
}
