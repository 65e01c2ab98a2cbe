import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LingerBounds } from '../../src/http/linger.js';
import { listen, type RunningServer } from '../../src/http/node-adapter.js';

// A client still sending a body the server answered without reading: the answer must reach it, and
// what it sends after the answer must not meet a reset (which can take the unread answer with it).

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server that refuses every request at once, its body unread. */
async function refusing(headers: Record<string, string> = {}, linger?: LingerBounds) {
  const running = await listen(
    async () =>
      new Response('{"error":{"code":"not_found"}}', {
        status: 404,
        headers: { 'content-type': 'application/json', ...headers },
      }),
    { port: 0, linger },
  );
  servers.push(running);
  // When the server's side of its (one) connection closes.
  const closed = new Promise<number>((resolve) =>
    (running.server as Server).once('connection', (socket: Socket) =>
      socket.once('close', () => resolve(performance.now())),
    ),
  );
  return { url: running.url, closed };
}

/**
 * A raw connection that records what it receives, the server's end, and any error. It keeps sending after the
 * server's end (half-open), as a client busy writing its body does before it reads that end.
 */
async function client(url: string) {
  const { port } = new URL(url);
  const socket: Socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
  const received: Buffer[] = [];
  let error: Error | undefined;
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.on('error', (e) => {
    error = e;
  });
  const ended = new Promise<number>((resolve) => socket.once('end', () => resolve(performance.now())));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    socket,
    ended,
    text: () => Buffer.concat(received).toString('latin1'),
    error: () => error,
    /** Sends `count` pieces of `size` bytes, pausing `pauseMs` between them; how many went out whole. */
    async send(count: number, size: number, pauseMs: number): Promise<number> {
      const piece = Buffer.alloc(size, 0x61);
      let sent = 0;
      for (let i = 0; i < count && !socket.destroyed; i++) {
        const ok = await new Promise<boolean>((resolve) => socket.write(piece, (e) => resolve(!e)));
        if (!ok) break;
        sent++;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      return sent;
    },
    async answer(): Promise<string> {
      const until = Date.now() + 5_000;
      while (!/\r\n\r\n.*\}/s.test(this.text()) && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 10));
      return this.text();
    },
  };
}

const head = (length: number, extra = '') =>
  `PUT /upload HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\ncontent-length: ${length}\r\n${extra}\r\n`;

describe('a connection closed under an unread body lingers', () => {
  it('a client sending for longer than the adapter drains (half a second) gets the answer, and no reset before its last byte', async () => {
    const running = await refusing();
    const c = await client(running.url);
    c.socket.write(head(32 * 128 * 1024));
    expect(await c.answer()).toMatch(/^HTTP\/1\.1 404 /);
    // 32 pieces 50 ms apart: the adapter gives up draining after 500 ms and closes; the close lingers.
    expect(await c.send(32, 128 * 1024, 50)).toBe(32);
    expect(c.error()).toBeUndefined();
    await c.ended; // the server's end came after the answer
    await running.closed; // and it closed once the body was in
    expect(c.error()).toBeUndefined();
  });

  it('after an answer with Connection: close, too', async () => {
    const running = await refusing({ connection: 'close' });
    const c = await client(running.url);
    c.socket.write(head(16 * 128 * 1024));
    const text = await c.answer();
    expect(text).toMatch(/^HTTP\/1\.1 404 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(await c.send(16, 128 * 1024, 50)).toBe(16);
    expect(c.error()).toBeUndefined();
    await running.closed;
    expect(c.error()).toBeUndefined();
  });

  it('a body that is all in closes as node closes it: at once after the answer', async () => {
    const running = await refusing({ connection: 'close' });
    const c = await client(running.url);
    c.socket.write(`${head(5)}hello`);
    const began = performance.now();
    expect(await c.answer()).toMatch(/^HTTP\/1\.1 404 /);
    expect((await c.ended) - began).toBeLessThan(1_000);
  });

  it('is bounded: a client that goes quiet is closed after the idle bound', async () => {
    const running = await refusing(
      { connection: 'close' },
      { idleMs: 300, totalMs: 10_000, maxBytes: 1 << 30 },
    );
    const c = await client(running.url);
    c.socket.write(head(1024 * 1024));
    expect(await c.answer()).toMatch(/^HTTP\/1\.1 404 /);
    const began = performance.now();
    const waited = (await running.closed) - began;
    expect(waited).toBeGreaterThan(200);
    expect(waited).toBeLessThan(5_000);
  });

  it('is bounded: a client that goes on sending is cut off past the bytes bound, and by the time bound', async () => {
    const bytes = await refusing({}, { idleMs: 5_000, totalMs: 10_000, maxBytes: 512 * 1024 });
    const a = await client(bytes.url);
    a.socket.write(head(64 * 64 * 1024));
    expect(await a.answer()).toMatch(/^HTTP\/1\.1 404 /);
    // The adapter drains the first half second; then the linger reads at most 512 KiB more.
    const sent = await a.send(64, 64 * 1024, 20);
    expect(sent).toBeLessThan(64);
    await bytes.closed;

    const time = await refusing({ connection: 'close' }, { idleMs: 5_000, totalMs: 400, maxBytes: 1 << 30 });
    const b = await client(time.url);
    b.socket.write(head(64 * 64 * 1024));
    expect(await b.answer()).toMatch(/^HTTP\/1\.1 404 /);
    expect(await b.send(64, 64 * 1024, 20)).toBeLessThan(64);
    await time.closed;
  });
});
