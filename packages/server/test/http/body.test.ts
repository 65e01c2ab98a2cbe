import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, parseJson, readBody } from '../../src/http/body.js';

/** A body streamed in chunks, without Content-Length, so only counting can catch it. */
function streamed(size: number, chunk = 64 * 1024): { request: Request; pulled: () => number } {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= size) return controller.close();
      const n = Math.min(chunk, size - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
  const request = new Request('http://x/', { method: 'POST', body, duplex: 'half' } as RequestInit);
  return { request, pulled: () => sent };
}

describe('readBody', () => {
  it.each([
    ['exactly 1 MiB', MAX_BODY_BYTES, true],
    ['1 MiB + 1 byte', MAX_BODY_BYTES + 1, false],
    ['empty', 0, true],
  ])('%s streamed without Content-Length', async (_, size, ok) => {
    const { request } = streamed(size);
    const read = await readBody(request);
    expect(read.ok).toBe(ok);
    if (read.ok) expect(read.bytes.byteLength).toBe(size);
    else expect(read.kind).toBe('payload_too_large');
  });

  it('stops pulling once over the cap', async () => {
    const { request, pulled } = streamed(50 * MAX_BODY_BYTES);
    expect(await readBody(request)).toEqual({ ok: false, kind: 'payload_too_large' });
    expect(pulled()).toBeLessThan(2 * MAX_BODY_BYTES);
  });

  it('refuses a declared Content-Length over the cap before reading', async () => {
    const request = new Request('http://x/', {
      method: 'POST',
      body: '{}',
      headers: { 'content-length': String(MAX_BODY_BYTES + 1) },
    });
    expect(await readBody(request)).toEqual({ ok: false, kind: 'payload_too_large' });
  });

  it('does not trust a small Content-Length', async () => {
    const { request } = streamed(MAX_BODY_BYTES + 1);
    request.headers.set('content-length', '2');
    expect((await readBody(request)).ok).toBe(false);
  });
});

describe('parseJson', () => {
  it.each([
    ['object', '{"a":[1,true,null]}', { ok: true, value: { a: [1, true, null] } }],
    ['truncated', '{"a":', { ok: false, kind: 'invalid_request', description: 'the body is not valid JSON' }],
    [
      'trailing garbage',
      '{} x',
      { ok: false, kind: 'invalid_request', description: 'the body is not valid JSON' },
    ],
  ])('%s', (_, text, want) => {
    expect(parseJson(new TextEncoder().encode(text))).toEqual(want);
  });

  it('rejects invalid UTF-8 instead of replacing it', () => {
    expect(parseJson(new Uint8Array([0x22, 0xc3, 0x22]))).toMatchObject({
      ok: false,
      kind: 'invalid_request',
    });
  });
});
