import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/node-adapter.js';

// Requests node:http cannot parse: answered in the published error shape, never a bare 400.

let running: RunningServer;
beforeAll(async () => {
  running = await listen(
    async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } }),
    {
      port: 0,
    },
  );
});
afterAll(() => running.close());

/** Sends `raw` on a new connection and returns all it receives until the server closes. */
async function exchange(...raws: string[]): Promise<string> {
  const { port } = new URL(running.url);
  const socket = connect(Number(port), '127.0.0.1');
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.on('error', () => {});
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  for (const raw of raws) {
    socket.write(raw);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const ended = await Promise.race([
    closed,
    new Promise<boolean>((resolve) => setTimeout(resolve, 5_000, false)),
  ]);
  socket.destroy();
  expect(ended, 'the server closed the connection').toBe(true);
  return Buffer.concat(received).toString('latin1');
}

/** The last answer in `text`: its status line, headers and JSON body. */
function lastAnswer(text: string) {
  const at = text.lastIndexOf('HTTP/1.1 ');
  const [head = '', body = ''] = text.slice(at).split('\r\n\r\n');
  const headers = Object.fromEntries(
    head
      .split('\r\n')
      .slice(1)
      .map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
  );
  return {
    status: head.split(' ')[1],
    headers,
    body: JSON.parse(body) as { error: Record<string, unknown> },
  };
}

describe('a request node:http cannot parse', () => {
  it.each([
    [
      'Content-Length and Transfer-Encoding together (request smuggling)',
      'POST /v1/workspaces HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n'],
    [
      'a bad chunk size',
      'POST /v1/workspaces HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
    ],
    ['headers over the limit', `GET /v1/me HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['a bad Content-Length', 'POST /v1/workspaces HTTP/1.1\r\nhost: x\r\ncontent-length: 1x\r\n\r\n'],
  ])(
    '%s: 400 invalid_request in the published shape, with a request id, then the connection closes',
    async (_name, raw) => {
      const text = await exchange(raw);
      expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      const answer = lastAnswer(text);
      expect(answer.status).toBe('400');
      expect(answer.headers['content-type']).toBe('application/json');
      expect(answer.headers.connection).toBe('close');
      expect(answer.body.error).toMatchObject({ code: 'invalid_request', details: {} });
      expect(answer.body.error.message).toMatch(/^The request is not valid HTTP\/1\.1: .+\.$/);
      expect(answer.body.error.request_id).toMatch(/^[0-9a-z]{27}$/);
      expect(answer.headers['request-id']).toBe(answer.body.error.request_id);
      // The input is never echoed.
      expect(answer.body.error.message).not.toContain('aaaa');
    },
  );

  it('after a good request on the same connection, a bad one is answered too', async () => {
    const text = await exchange('GET /v1/me HTTP/1.1\r\nhost: x\r\n\r\n', 'HELLO THERE\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(2);
    expect(lastAnswer(text).body.error.code).toBe('invalid_request');
  });
});
