// The front as the spec-dev loop runs it, before a stand-in for Prism: the bundle and the Prism to ask are
// read at each request; while Prism has loaded an older bundle that differs only in examples, its answer
// from an example carries the newer value; and nothing Prism or the bundle does stops the front.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStreamFront } from '../spec-mock.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the fixture is a plain JSON document edited freely
type Doc = Record<string, any>;

function bundle(status: string, schemaType = 'object'): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'Front', version: '1' },
    paths: {
      '/health': {
        get: {
          responses: {
            '200': {
              description: 'Up.',
              content: {
                'application/json': {
                  schema: { type: schemaType },
                  examples: { ok: { value: { status } } },
                },
              },
            },
          },
        },
      },
    },
  };
}

/** A stand-in for Prism on the older bundle: the example as Prism sends it, chunked, or a cut answer. */
function prism(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":');
      setTimeout(() => res.destroy(), 20);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req-1' });
    res.end(JSON.stringify(req.url === '/health' ? { status: 'old' } : { generated: true }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({
        server,
        url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
      });
    }),
  );
}

describe('the front before a Prism on an older bundle', () => {
  const served = bundle('old');
  let current: Doc = served;
  let broken = false;
  let upstream: { server: Server; url: string };
  let front: Awaited<ReturnType<typeof startStreamFront>>;
  beforeAll(async () => {
    upstream = await prism();
    front = await startStreamFront({
      document: () => {
        if (broken) throw new SyntaxError('Unterminated string in JSON at position 524158');
        return current;
      },
      served: () => served,
      upstream: () => upstream.url,
    });
  });
  afterAll(async () => {
    await front?.close();
    await new Promise((resolve) => upstream?.server.close(resolve));
  });

  it.each<[string, { given: () => Doc; want: unknown }]>([
    ['the same bundle: Prism’s answer', { given: () => served, want: { status: 'old' } }],
    ['only an example changed: the newer value', { given: () => bundle('new'), want: { status: 'new' } }],
    [
      'a schema changed too: Prism’s answer',
      { given: () => bundle('new', 'array'), want: { status: 'old' } },
    ],
  ])('%s', async (_name, { given, want }) => {
    current = given();
    const response = await fetch(`${front.url}/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toBe('req-1');
    const text = await response.text();
    const length = response.headers.get('content-length');
    if (length !== null) expect(Number(length)).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toEqual(want);
  });

  it('passes on a body that is no example', async () => {
    current = bundle('new');
    expect(await (await fetch(`${front.url}/other`)).json()).toEqual({ generated: true });
  });

  it('answers 500 with the reason when the bundle cannot be read, and keeps answering', async () => {
    broken = true;
    const response = await fetch(`${front.url}/health`);
    broken = false;
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/could not answer from the bundle: Unterminated string/);
    expect((await fetch(`${front.url}/health`)).status).toBe(200);
  });

  it('cuts the answer when Prism cuts its own, and keeps answering', async () => {
    await expect(fetch(`${front.url}/cut`).then((r) => r.text())).rejects.toThrow();
    await vi.waitFor(() => expect(front.pending(upstream.url)).toBe(0));
    expect((await fetch(`${front.url}/health`)).status).toBe(200);
  });

  it('answers 502 when no Prism listens, and keeps answering', async () => {
    const gone = upstream.url;
    upstream = { server: upstream.server, url: 'http://127.0.0.1:1' };
    const response = await fetch(`${front.url}/health`);
    upstream = { server: upstream.server, url: gone };
    expect(response.status).toBe(502);
    expect(await response.text()).toMatch(/Prism is not answering/);
    expect((await fetch(`${front.url}/health`)).status).toBe(200);
  });
});
