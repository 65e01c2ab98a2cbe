// `@svc/client/files` against an in-test HTTP server that answers the files routes as the spec writes
// them (PUT/GET …/files and …/files/archive): every kind of body, a 20 MB upload read as it is sent,
// a download read as it comes, the error envelope, and the JSON operations through the typed client.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { callbackToken } from '../src/auth/tokens.js';
import { downloadArchive, downloadFile, uploadArchive, uploadFile } from '../src/files.js';
import { ApiError, createClient, unwrap } from '../src/index.js';
import { createClient as createRetryClient } from '../src/retrying.js';
import { createTransport, oneShot } from '../src/transport.js';

const MiB = 1024 * 1024;

interface Received {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  bytes: number;
  chunks: number;
  text: string;
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

function envelope(res: ServerResponse, status: number, code: string, message: string) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': 'req_1' });
  res.end(JSON.stringify({ error: { code, message, details: null, request_id: 'req_1' } }));
}

/** A files server: uploads are counted (and kept when small), downloads answer `content`. */
async function start(
  options: {
    content?: Uint8Array;
    onFirstChunk?: () => void;
    refuse?: { status: number; code: string };
  } = {},
) {
  const received: Received[] = [];
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const entry: Received = {
      method: req.method ?? '',
      url,
      headers: req.headers,
      bytes: 0,
      chunks: 0,
      text: '',
    };
    received.push(entry);
    const kept: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      if (entry.chunks === 0) options.onFirstChunk?.();
      entry.chunks++;
      entry.bytes += chunk.length;
      if (entry.bytes <= MiB) kept.push(chunk);
    });
    req.on('end', () => {
      entry.text = Buffer.concat(kept).toString();
      if (options.refuse) return envelope(res, options.refuse.status, options.refuse.code, 'refused');
      const path = url.searchParams.get('path') ?? '';
      const archive = url.pathname.endsWith('/files/archive');
      if (req.method === 'PUT') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const answer = archive
          ? { archive: { path, entries: 1, bytes: entry.bytes } }
          : {
              file: {
                path,
                name: path.split('/').pop(),
                type: 'file',
                size: entry.bytes,
                mode: '0644',
                modified_at: '2026-11-10T12:00:05Z',
              },
            };
        return res.end(JSON.stringify(answer));
      }
      if (url.pathname.endsWith('/files/stat'))
        return res.writeHead(200, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            file: {
              path,
              name: 'x',
              type: 'directory',
              size: 0,
              mode: '0755',
              modified_at: '2026-11-10T12:00:05Z',
            },
          }),
        );
      if (req.method === 'DELETE') return res.writeHead(204).end();
      const content = options.content ?? new Uint8Array();
      res.writeHead(200, {
        'Content-Type': archive ? 'application/x-tar' : 'application/octet-stream',
        ...(archive ? {} : { 'Content-Length': String(content.byteLength), ETag: 'W/"e1"' }),
      });
      // Written in 64 KiB pieces, so the client can read the first before the last is sent.
      let offset = 0;
      const write = () => {
        while (offset < content.byteLength) {
          const piece = content.subarray(offset, offset + 64 * 1024);
          offset += piece.byteLength;
          if (!res.write(piece)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = createClient({ baseUrl: `http://127.0.0.1:${port}/v1`, token: 't' });
  return { client, received, port };
}

const text = 'hello, computer\n';
const encoded = new TextEncoder().encode(text);

describe('uploadFile', () => {
  it.each([
    ['a string', () => text, true],
    ['bytes', () => encoded, true],
    ['a Blob', () => new Blob([text]), true],
    ['a ReadableStream', () => new Blob([text]).stream(), false],
    ['a Node Readable', () => Readable.from([Buffer.from('hello, '), Buffer.from('computer\n')]), false],
  ])('sends %s as application/octet-stream with the query and the headers', async (_, body, sized) => {
    const { client, received } = await start();
    const answer = await uploadFile(client, 'dev', 'box', '/home/svc/a.txt', body(), {
      mode: '0600',
      parents: true,
      idempotencyKey: 'k1',
    });
    expect(answer.file.size).toBe(encoded.byteLength);
    const [put] = received;
    expect(put?.method).toBe('PUT');
    expect(put?.url.pathname).toBe('/v1/workspaces/dev/computers/box/files');
    expect(Object.fromEntries(put?.url.searchParams ?? [])).toEqual({
      path: '/home/svc/a.txt',
      mode: '0600',
      parents: 'true',
    });
    expect(put?.text).toBe(text);
    expect(put?.headers['content-type']).toBe('application/octet-stream');
    expect(put?.headers['idempotency-key']).toBe('k1');
    expect(put?.headers.authorization).toBe('Bearer t');
    expect(put?.headers['content-length']).toBe(sized ? String(encoded.byteLength) : undefined);
  });

  it('sends 20 MB read as it goes: the server has the first chunk before the source gave its last', async () => {
    const total = 20 * MiB;
    const piece = 256 * 1024;
    let produced = 0;
    let producedAtFirstChunk = -1;
    const { client, received } = await start({ onFirstChunk: () => (producedAtFirstChunk = produced) });
    async function* source() {
      while (produced < total) {
        produced += piece;
        yield new Uint8Array(piece).fill(produced % 251);
      }
    }
    const seen: number[] = [];
    const answer = await uploadFile(client, 'dev', 'box', '/home/svc/big.bin', source(), {
      size: total,
      onProgress: ({ sent, total: of }) => {
        expect(of).toBe(total);
        seen.push(sent);
      },
    });
    expect(answer.file.size).toBe(total);
    expect(received[0]?.bytes).toBe(total);
    expect(received[0]?.headers['content-length']).toBe(String(total));
    expect(received[0]?.chunks).toBeGreaterThan(1);
    // Pulled on demand: when the first bytes arrived, most of the source was still to be read.
    expect(producedAtFirstChunk).toBeGreaterThan(0);
    expect(producedAtFirstChunk).toBeLessThan(total / 2);
    expect(seen.length).toBe(total / piece);
    expect(seen.at(-1)).toBe(total);
  });

  it('is sent once, not retried, even by a retrying client (a stream cannot be read again)', async () => {
    const { received, port } = await start({ refuse: { status: 503, code: 'unavailable' } });
    const client = createRetryClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      token: 't',
      sleep: async () => {},
    });
    await expect(
      uploadFile(client, 'dev', 'box', '/home/svc/a.txt', Readable.from([Buffer.from('x')])),
    ).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    expect(received).toHaveLength(1);
  });

  it('throws ApiError from the error envelope', async () => {
    const { client } = await start({ refuse: { status: 413, code: 'payload_too_large' } });
    const error = await uploadFile(client, 'dev', 'box', '/home/svc/a.txt', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 413, code: 'payload_too_large', requestId: 'req_1' });
  });
});

describe('the transport with a read-once body', () => {
  it.each([
    ['moves it into the one request sent (no copy, whose unread half would keep every byte)', true, 1],
    ['copies any other body per attempt (and tries again after a 401 with a renewed token)', false, 2],
  ])('%s', async (_, marked, attempts) => {
    let sent = 0;
    const transport = createTransport({
      fetch: async (request) => {
        sent++;
        await request.arrayBuffer();
        return new Response(null, { status: 401 });
      },
      tokens: callbackToken(async ({ forceRefresh }) => (forceRefresh ? 'fresh' : 'old')),
      send: undefined,
      idempotencyKey: () => 'k',
      userAgent: undefined,
    });
    const body = new Blob(['bytes']).stream();
    const base = new Request('http://api.test/v1/x', {
      method: 'PUT',
      body: marked ? oneShot(body) : body,
      duplex: 'half',
    } as RequestInit);
    expect((await transport(base)).status).toBe(401);
    expect(sent).toBe(attempts);
    expect(base.bodyUsed).toBe(marked);
  });
});

describe('downloadFile', () => {
  it('answers a stream read as it comes, with the size and the ETag', async () => {
    const content = new Uint8Array(4 * MiB).map((_, i) => i % 256);
    const { client, received } = await start({ content });
    const download = await downloadFile(client, 'dev', 'box', '/home/svc/big.bin');
    expect(download.size).toBe(content.byteLength);
    expect(download.etag).toBe('W/"e1"');
    expect(received[0]?.url.searchParams.get('path')).toBe('/home/svc/big.bin');
    let chunks = 0;
    let bytes = 0;
    const reader = download.body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      chunks++;
      bytes += read.value.byteLength;
    }
    expect(bytes).toBe(content.byteLength);
    expect(chunks).toBeGreaterThan(1);
  });

  it('answers an empty stream for an empty file', async () => {
    const { client } = await start({ content: new Uint8Array() });
    const download = await downloadFile(client, 'dev', 'box', '/home/svc/empty');
    expect(download.size).toBe(0);
    expect(await new Response(download.body).text()).toBe('');
  });

  it('throws ApiError from the error envelope', async () => {
    const { client } = await start({ refuse: { status: 404, code: 'not_found' } });
    await expect(downloadFile(client, 'dev', 'box', '/home/svc/none')).rejects.toMatchObject({
      name: 'ApiError',
      status: 404,
      code: 'not_found',
    });
  });
});

describe('archives', () => {
  it('uploads a tar as application/x-tar and answers the archive', async () => {
    const { client, received } = await start();
    const { archive } = await uploadArchive(client, 'dev', 'box', '/home/svc/src', new Blob(['tar']), {
      parents: true,
    });
    expect(archive).toEqual({ path: '/home/svc/src', entries: 1, bytes: 3 });
    expect(received[0]?.url.pathname).toBe('/v1/workspaces/dev/computers/box/files/archive');
    expect(received[0]?.headers['content-type']).toBe('application/x-tar');
    expect(received[0]?.url.searchParams.get('parents')).toBe('true');
  });

  it('downloads a tar streamed, without a size', async () => {
    const { client } = await start({ content: new TextEncoder().encode('tarbytes') });
    const download = await downloadArchive(client, 'dev', 'box', '/home/svc/src');
    expect(download.size).toBeUndefined();
    expect(await new Response(download.body).text()).toBe('tarbytes');
  });
});

describe('the JSON file operations through the typed client', () => {
  it('stats and deletes', async () => {
    const { client, received } = await start();
    const { file } = await unwrap(
      client.GET('/workspaces/{workspace}/computers/{computer}/files/stat', {
        params: { path: { workspace: 'dev', computer: 'box' }, query: { path: '/home/svc' } },
      }),
    );
    expect(file.type).toBe('directory');
    await unwrap(
      client.DELETE('/workspaces/{workspace}/computers/{computer}/files', {
        params: {
          path: { workspace: 'dev', computer: 'box' },
          query: { path: '/home/svc/x', recursive: true },
        },
      }),
    );
    expect(received[1]?.method).toBe('DELETE');
    expect(received[1]?.url.searchParams.get('recursive')).toBe('true');
    expect(received[1]?.headers['idempotency-key']).toBeTruthy();
  });
});
