import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import { outgoingBytes } from '../../src/http/byte-body.js';
import type { RunningServer } from '../../src/http/node-adapter.js';
import { listen } from '../../src/http/node-adapter.js';
import { createHttpCore } from '../../src/http/pipeline.js';
import { nodeBackedStream } from '../../src/node-bytes.js';
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

describe('a node-backed byte body is written straight into the Node response', () => {
  let direct: RunningServer;
  /** Per path asked for: the body's web stream and its Node stream, once made. */
  const made = new Map<string, { web: ReadableStream<Uint8Array>; node?: Readable }>();
  const PIECE = 64 * 1024;
  const sources: Record<string, () => Readable> = {
    '/home/svc/ok.txt': () => Readable.from([Buffer.from('hello'), Buffer.from(' world')]),
    // Endless, slow: only the client going away ends it.
    '/home/svc/slow.bin': () =>
      new Readable({
        read() {
          setTimeout(() => this.push(Buffer.alloc(PIECE, 1)), 5);
        },
      }),
    // A piece, then (a little later) a failure.
    '/home/svc/broken.bin': () => {
      let sent = false;
      return new Readable({
        read() {
          if (sent) setTimeout(() => this.destroy(new Error('the Engine went away')), 30);
          else {
            sent = true;
            this.push(Buffer.alloc(PIECE, 2));
          }
        },
      });
    },
  };
  const lengths: Record<string, number> = {
    '/home/svc/ok.txt': 11,
    '/home/svc/slow.bin': 1 << 30,
    '/home/svc/broken.bin': 4 * PIECE,
  };

  beforeAll(async () => {
    const core = createHttpCore({
      document,
      handle: async (ctx) => {
        if (ctx.operationId !== 'downloadComputerFile') return ctx.error('not_found', 'no such route');
        const path = String(ctx.input.query.path);
        const open = sources[path];
        if (!open) return ctx.error('not_found', `${path} does not exist`, { path });
        const entry: { web: ReadableStream<Uint8Array>; node?: Readable } = {
          web: nodeBackedStream(() => {
            entry.node = open();
            return entry.node;
          }),
        };
        made.set(path, entry);
        return ctx.bytes(200, outgoingBytes(entry.web, 'application/octet-stream', lengths[path]), {
          etag: 'W/"11-1"',
        });
      },
    });
    direct = await listen(core, { port: 0 });
  });
  afterAll(() => direct.close());

  const url = (path: string) =>
    `${direct.url}/v1/workspaces/acme/computers/web-1/files?path=${encodeURIComponent(path)}`;

  it('keeps the status and headers (Content-Length, ETag, Request-Id, Content-Type); the web stream is never read', async () => {
    const response = await fetch(url('/home/svc/ok.txt'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('11');
    expect(response.headers.get('etag')).toBe('W/"11-1"');
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('request-id')).toBeTruthy();
    expect(await response.text()).toBe('hello world');
    const entry = made.get('/home/svc/ok.txt');
    expect(entry?.node?.readableEnded).toBe(true);
    expect(entry?.web.locked).toBe(false);
  });

  it('answers an error before any byte in the published shape', async () => {
    const response = await fetch(url('/home/svc/missing.txt'));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({
      error: { code: 'not_found', details: { path: '/home/svc/missing.txt' } },
    });
  });

  it('destroys the Node stream when the client goes away', async () => {
    const client = new AbortController();
    const response = await fetch(url('/home/svc/slow.bin'), { signal: client.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).done).toBe(false);
    client.abort();
    await reader.read().catch(() => {});
    await expect.poll(() => made.get('/home/svc/slow.bin')?.node?.destroyed).toBe(true);
  });

  it('drops the connection when the Node stream fails, so the client sees a body cut short', async () => {
    const response = await fetch(url('/home/svc/broken.bin'));
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toThrow();
  });

  it('HEAD: the headers alone, and the Node stream is released', async () => {
    const response = await fetch(url('/home/svc/ok.txt'), { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('W/"11-1"');
    expect(await response.text()).toBe('');
    await expect.poll(() => made.get('/home/svc/ok.txt')?.node?.destroyed).toBe(true);
  });
});
