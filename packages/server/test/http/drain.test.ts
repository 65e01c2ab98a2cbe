import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { listen, type RunningServer } from '../../src/http/node-adapter.js';

let running: RunningServer | undefined;
afterEach(async () => {
  const server = running?.server as Server | undefined;
  server?.closeAllConnections();
  if (server?.listening) await running?.close();
  running = undefined;
});

/** A raw connection: what the client wrote is exactly what the server reads, nothing is pooled. */
async function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Sends one GET on `socket` and reads one answer (its body is short and sent with a length). */
function get(socket: Socket, path: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/^content-length: (\d+)$/im.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ head: text.slice(0, end).toLowerCase(), body: text.slice(end + 4, end + 4 + length) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`${path}: the connection closed before the answer`)));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

/** Whether a new connection is refused: the listener is closed. */
function refused(url: string): Promise<boolean> {
  return open(url).then(
    (socket) => {
      socket.destroy();
      return false;
    },
    (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
  );
}

const ended = (socket: Socket) => new Promise<void>((resolve) => socket.once('end', resolve));

test('a keep-alive connection idle when the listener closes is not closed under its client: its next request is answered', async () => {
  running = await listen(async (request) => new Response(new URL(request.url).pathname), { port: 0 });
  const socket = await open(running.url);
  expect((await get(socket, '/before')).head).toContain('connection: keep-alive');

  running.endKeepAlive();
  let drained = false;
  const drain = running.drain().then(() => {
    drained = true;
  });
  // Each probe is a connection, which puts off the close by the quiet time (100 ms): probe slower.
  for (let i = 0; i < 20 && !(await refused(running.url)); i++)
    await new Promise((resolve) => setTimeout(resolve, 150));
  expect(await refused(running.url)).toBe(true);

  // Node's http.Server#close would have destroyed this connection (closeIdleConnections).
  const closing = ended(socket);
  const answer = await get(socket, '/after');
  expect(answer).toMatchObject({ body: '/after' });
  expect(answer.head).toContain('connection: close');
  await closing;
  await drain;
  expect(drained).toBe(true);
});

test('while the listener waits to close, answers that send a client to reconnect wait for it', async () => {
  running = await listen(async () => new Response('ok'), { port: 0 });
  const url = running.url;
  running.endKeepAlive();
  const drain = running.drain();
  // Connected before the listener closed, answered after: the client's reconnect is refused, never
  // caught half-accepted by the close.
  const socket = await open(url);
  const answer = await get(socket, '/x');
  expect(answer.head).toContain('connection: close');
  expect(await refused(url)).toBe(true);
  await drain;
});

test('drain waits for the answer in flight and resolves when its connection has ended', async () => {
  let finish!: () => void;
  running = await listen(
    () =>
      new Promise<Response>((resolve) => {
        finish = () => resolve(new Response('late'));
      }),
    { port: 0 },
  );
  running.endKeepAlive();
  const socket = await open(running.url);
  const answer = get(socket, '/slow');
  await new Promise((resolve) => setTimeout(resolve, 50));
  let drained = false;
  const drain = running.drain().then(() => {
    drained = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(drained).toBe(false);
  finish();
  expect(await answer).toMatchObject({ body: 'late', head: expect.stringContaining('connection: close') });
  await drain;
});
