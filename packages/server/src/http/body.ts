/** The largest request body the API accepts (design §11): 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The outcome of reading a body: its bytes, or the fact that it went over the cap. */
export type ReadBodyResult = { ok: true; bytes: Uint8Array } | { ok: false; kind: 'payload_too_large' };

/** The outcome of parsing a JSON text. */
export type ParseJsonResult =
  | { ok: true; value: unknown }
  | { ok: false; kind: 'invalid_request'; description: string };

/**
 * Reads a request body, counting bytes as they stream in and giving up (cancelling the stream) the
 * moment the count passes `limit`. A `Content-Length` above the limit is refused before reading; a
 * smaller or missing one is not trusted, the count is.
 *
 * @example
 * const read = await readBody(new Request('http://x/', { method: 'POST', body: '{}' }));
 * if (read.ok) console.log(read.bytes.byteLength); // 2
 */
export async function readBody(request: Request, limit = MAX_BODY_BYTES): Promise<ReadBodyResult> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, kind: 'payload_too_large' };
  }
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false, kind: 'payload_too_large' };
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0] as Uint8Array };
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Decodes UTF-8 (strictly: invalid bytes are an error, not U+FFFD) and parses JSON. Any failure is
 * `invalid_request` (design §9: malformed JSON), with a short description that never echoes the body.
 *
 * @example
 * parseJson(new TextEncoder().encode('{"a":1}')); // { ok: true, value: { a: 1 } }
 */
export function parseJson(bytes: Uint8Array): ParseJsonResult {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, kind: 'invalid_request', description: 'the body is not valid UTF-8' };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, kind: 'invalid_request', description: 'the body is not valid JSON' };
  }
}
