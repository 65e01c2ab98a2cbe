import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import type { RunningServer } from '../../src/http/node-adapter.js';
import { listen } from '../../src/http/node-adapter.js';
import { createHttpCore } from '../../src/http/pipeline.js';
import { document } from './fixtures.js';

let running: RunningServer;
let aborted: Promise<string>;
let onAbort: (reason: string) => void;
const encoder = new TextEncoder();

beforeAll(async () => {
  const core = createHttpCore({
    document,
    handle: async (ctx) => {
      if (ctx.operationId === 'getOperation') {
        // hold the request until the client goes away
        ctx.request.signal.addEventListener('abort', () => onAbort('aborted'));
        return new Promise<Response>(() => {});
      }
      if (ctx.operationId === 'listImages') {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode('{"images":[],'));
            setTimeout(() => {
              controller.enqueue(encoder.encode('"next_cursor":null,"has_more":false}'));
              controller.close();
            }, 20);
          },
        });
        const headers = new Headers({ 'content-type': 'application/json' });
        headers.append('set-cookie', 'a=1; Path=/');
        headers.append('set-cookie', 'b=2; Path=/');
        return new Response(body, { headers });
      }
      return ctx.json(200, { ok: ctx.input.body ?? null });
    },
  });
  running = await listen(core, { port: 0 });
});
afterAll(() => running.close());

describe('node adapter (port 0)', () => {
  it('serves the core and streams a response with several Set-Cookie lines', async () => {
    const response = await fetch(`${running.url}/v1/images`);
    expect(response.status).toBe(200);
    expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(await response.json()).toEqual({ images: [], next_cursor: null, has_more: false });
  });

  it('reads a JSON body and refuses 1 MiB + 1 byte with 413', async () => {
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'k' };
    const ok = await fetch(`${running.url}/v1/workspaces`, {
      method: 'POST',
      headers,
      body: '{"name":"acme-dev"}',
    });
    expect(await ok.json()).toEqual({ ok: { name: 'acme-dev' } });
    const big = await fetch(`${running.url}/v1/workspaces`, {
      method: 'POST',
      headers,
      body: ' '.repeat(MAX_BODY_BYTES + 1),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
  });

  it('answers 413 to an upload whose Content-Length is over the limit while the client is still sending, then closes', async () => {
    const { port } = new URL(running.url);
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => {}); // the server may close while we write: expected
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'PUT /v1/workspaces/acme/computers/web-1/files?path=%2Fhome%2Fsvc%2Fbig HTTP/1.1\r\n' +
        'host: 127.0.0.1\r\ncontent-type: application/octet-stream\r\n' +
        `content-length: ${2 * 1024 ** 3}\r\n\r\n`,
    );
    // Go on sending, as a client that does not wait for an early answer does (up to 128 MiB).
    const chunk = Buffer.alloc(1024 * 1024);
    for (let sent = 0; sent < 128 && !socket.destroyed && received.length === 0; sent++) {
      if (!socket.write(chunk))
        await Promise.race([
          new Promise((resolve) => socket.once('drain', resolve)),
          new Promise((resolve) => setTimeout(resolve, 50)),
        ]);
    }
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000))]);
    socket.destroy();
    const text = Buffer.concat(received).toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(text).toContain('"limit_bytes":1073741824');
  });

  it('aborts request.signal when the client disconnects', async () => {
    aborted = new Promise((resolve) => (onAbort = resolve));
    const client = new AbortController();
    const pending = fetch(`${running.url}/v1/operations/01m6ddfps70g9sk0sar56ypyzq2`, {
      signal: client.signal,
    }).catch((e: Error) => e.name);
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.abort();
    expect(await pending).toBe('AbortError');
    expect(
      await Promise.race([aborted, new Promise((resolve) => setTimeout(() => resolve('timeout'), 2000))]),
    ).toBe('aborted');
  });
});

describe('the request timeout (SVC_REQUEST_TIMEOUT_MS)', () => {
  it("is node:http's own bound on a whole request, set on the server; node's 5 minutes otherwise", async () => {
    const slow = await listen(async () => new Response('ok'), { port: 0, requestTimeoutMs: 3_600_000 });
    const plain = await listen(async () => new Response('ok'), { port: 0 });
    try {
      expect((slow.server as import('node:http').Server).requestTimeout).toBe(3_600_000);
      expect((plain.server as import('node:http').Server).requestTimeout).toBe(300_000);
    } finally {
      await slow.close();
      await plain.close();
    }
  });
});
