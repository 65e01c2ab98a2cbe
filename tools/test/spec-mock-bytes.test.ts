// `pnpm mock` and byte bodies: the front answers uploads and downloads (Prism only checks them), so the
// bytes never go through Prism. Against the real bundle.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  byteOperations,
  MOCK_FILE,
  MOCK_MTIME,
  mockArchive,
  mockBytes,
  PLACEHOLDER,
} from '../mock-bytes.mjs';
import { freePort, startMock, startStreamFront } from '../spec-mock.mjs';

const bundlePath = fileURLToPath(new URL('../../spec/dist/openapi.json', import.meta.url));
const bundle = JSON.parse(readFileSync(bundlePath, 'utf8'));
const FILES = '/workspaces/acme-dev/computers/build-runner-1/files';
const BEARER = { authorization: 'Bearer anything' };
const OCTETS = 'application/octet-stream';
const TAR = 'application/x-tar';

describe('the byte operations the front finds in the bundle', () => {
  it("are the uploads and downloads of files and archives, a screen's picture and a terminal's input, each body with its limit", () => {
    const found = byteOperations(bundle).map((o) => [
      o.operationId,
      o.method,
      o.kind,
      o.mediaType,
      o.maxBytes,
    ]);
    expect(found.sort()).toEqual(
      [
        ['downloadComputerArchive', 'GET', 'download', TAR, undefined],
        ['downloadComputerFile', 'GET', 'download', OCTETS, undefined],
        ['downloadComputerScreen', 'GET', 'download', 'image/png', undefined],
        ['sendComputerTerminalInput', 'POST', 'upload', OCTETS, 65536],
        ['uploadComputerArchive', 'PUT', 'upload', TAR, 1073741824],
        ['uploadComputerFile', 'PUT', 'upload', OCTETS, 1073741824],
      ].sort(),
    );
  });

  it("answers a download's example from the spec, else its own bytes", () => {
    const [file, archive] = ['downloadComputerFile', 'downloadComputerArchive'].map(
      (id) => byteOperations(bundle).find((o) => o.operationId === id) ?? expect.fail(id),
    );
    expect(mockBytes(file).toString('utf8')).toBe(Object.values(file.examples)[0]);
    expect(mockBytes({ ...file, examples: {} }).toString('utf8')).toBe(MOCK_FILE);
    expect(mockBytes({ ...archive, examples: {} }).equals(mockArchive())).toBe(true);
    // A screen's picture is the mock's own PNG, whatever the spec's (text) example says.
    const screen = byteOperations(bundle).find((o) => o.operationId === 'downloadComputerScreen');
    expect([...mockBytes(screen ?? expect.fail('downloadComputerScreen')).subarray(0, 4)]).toEqual([
      0x89, 0x50, 0x4e, 0x47,
    ]);
  });

  it("makes archives tar reads: the spec's example, and the mock's own", () => {
    const archive = byteOperations(bundle).find((o) => o.operationId === 'downloadComputerArchive');
    const dir = mkdtempSync(join(tmpdir(), 'mock-tar-'));
    try {
      writeFileSync(join(dir, 'example.tar'), mockBytes(archive ?? expect.fail('no archive')));
      expect(execFileSync('tar', ['-tf', join(dir, 'example.tar')], { encoding: 'utf8' })).toBe(
        'src/\nsrc/main.c\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("makes an archive tar reads: the directory and its one file, the mock's text", () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-tar-'));
    try {
      writeFileSync(join(dir, 'a.tar'), mockArchive());
      expect(execFileSync('tar', ['-tf', join(dir, 'a.tar')], { encoding: 'utf8' })).toBe(
        'mock/\nmock/hello.txt\n',
      );
      execFileSync('tar', ['-xf', join(dir, 'a.tar'), '-C', dir]);
      expect(readFileSync(join(dir, 'mock/hello.txt'), 'utf8')).toBe(MOCK_FILE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pnpm mock: byte operations', { timeout: 120_000 }, () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  beforeAll(async () => {
    mock = await startMock({
      bundle: bundlePath,
      port: await freePort(),
      flags: ['--errors', '--cors'],
      stdio: 'pipe',
    });
  }, 120_000);
  afterAll(async () => {
    await mock?.stop();
  });
  const put = (path: string, body: BodyInit, headers: Record<string, string>) =>
    fetch(`${mock.url}${path}`, { method: 'PUT', body, headers: { ...BEARER, ...headers } });

  const example = (id: string) => {
    const operation = byteOperations(bundle).find((o) => o.operationId === id);
    return mockBytes(operation ?? expect.fail(id));
  };

  it("answers a file download with its example's bytes, Content-Type, Content-Length and ETag", async () => {
    const response = await fetch(`${mock.url}${FILES}?path=/home/svc/a.txt`, { headers: BEARER });
    const bytes = example('downloadComputerFile');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(OCTETS);
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(response.headers.get('etag')).toBe(`W/"${bytes.length}-${MOCK_MTIME}"`);
    expect(response.headers.get('request-id')).toMatch(/^[0-9a-hjkmnp-tv-z]{27}$/);
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("answers an archive download with its example's tar archive, without Content-Length", async () => {
    const response = await fetch(`${mock.url}${FILES}/archive?path=/home/svc`, { headers: BEARER });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(TAR);
    expect(response.headers.get('content-length')).toBeNull();
    expect(Buffer.from(await response.arrayBuffer()).equals(example('downloadComputerArchive'))).toBe(true);
  });

  it('passes on what Prism says of a download it refuses: no Bearer, a bad path, Prefer: code', async () => {
    expect((await fetch(`${mock.url}${FILES}?path=/home/svc/a.txt`)).status).toBe(401);
    expect((await fetch(`${mock.url}${FILES}`, { headers: BEARER })).status).toBe(400);
    const missing = await fetch(`${mock.url}${FILES}?path=/home/svc/a.txt`, {
      headers: { ...BEARER, prefer: 'code=404' },
    });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('not_found');
  });

  it("accepts an upload of the declared media type, any bytes, and answers the operation's JSON example", async () => {
    const every = new Uint8Array(256).map((_, i) => i);
    const file = await put(`${FILES}?path=/home/svc/a.bin`, every, { 'content-type': OCTETS });
    expect(file.status).toBe(200);
    expect(Object.keys(await file.json())).toEqual(['file']);
    const archive = await put(`${FILES}/archive?path=/home/svc/src`, mockArchive(), { 'content-type': TAR });
    expect(archive.status).toBe(200);
    expect(Object.keys(await archive.json())).toEqual(['archive']);
  });

  it('answers 415 in the published error shape to an upload of another media type', async () => {
    for (const type of ['application/json', TAR, 'text/plain']) {
      const response = await put(`${FILES}?path=/home/svc/a.bin`, 'hello', { 'content-type': type });
      expect(response.status, type).toBe(415);
      expect((await response.json()).error).toMatchObject({ code: 'unsupported_media_type' });
    }
  });

  it('answers 413 in the published error shape to an upload over its limit, by Content-Length', async () => {
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      // fetch cannot claim a length it does not send: a raw request says 1 GiB + 1, then sends a little.
      import('node:http').then(({ request }) => {
        const url = new URL(`${mock.url}${FILES}?path=/home/svc/a.bin`);
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            method: 'PUT',
            path: `${url.pathname}${url.search}`,
            headers: { ...BEARER, 'content-type': OCTETS, 'content-length': String(1073741824 + 1) },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk) => {
              body += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.write(Buffer.alloc(1024));
      });
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).error).toMatchObject({ code: 'payload_too_large' });
  });

  it('still answers 401 to an upload without a Bearer', async () => {
    const response = await fetch(`${mock.url}${FILES}?path=/home/svc/a.bin`, {
      method: 'PUT',
      body: 'x',
      headers: { 'content-type': OCTETS },
    });
    expect(response.status).toBe(401);
  });
});

// The front alone, before a stand-in for Prism that records what reaches it and answers the status its
// `Prefer: code=…` asks for (else 200): the bytes of an upload never reach it, and a body over a small
// limit is refused by counting when no Content-Length says so.
describe('the front, before a recording stand-in for Prism', () => {
  const seen: { prefer: string | undefined; body: Buffer; type: string | undefined }[] = [];
  let upstream: ReturnType<typeof createServer>;
  let front: Awaited<ReturnType<typeof startStreamFront>>;
  beforeAll(async () => {
    upstream = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const prefer = req.headers.prefer;
        seen.push({ prefer, body: Buffer.concat(chunks), type: req.headers['content-type'] });
        const code = Number(/code=(\d+)/.exec(prefer ?? '')?.[1] ?? 200);
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(code === 200 ? { file: {} } : { error: { code: String(code) } }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const address = upstream.address();
    const small = structuredClone(bundle);
    small.paths['/workspaces/{workspace}/computers/{computer}/files'].put.requestBody.content[OCTETS].schema[
      'x-svc-max-bytes'
    ] = 16;
    front = await startStreamFront({
      document: small,
      upstream: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    });
  });
  afterAll(async () => {
    await front?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('gives Prism a placeholder in place of the bytes, of the declared type', async () => {
    seen.length = 0;
    const every = new Uint8Array(16).map((_, i) => 255 - i);
    const response = await fetch(`${front.url}${FILES}?path=/a`, {
      method: 'PUT',
      body: every,
      headers: { ...BEARER, 'content-type': OCTETS },
    });
    expect(response.status).toBe(200);
    expect(seen).toEqual([{ prefer: undefined, body: PLACEHOLDER, type: OCTETS }]);
  });

  it('refuses a body over the limit by counting, when no Content-Length says so (chunked): 413', async () => {
    seen.length = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(8));
        controller.close();
      },
    });
    const response = await fetch(`${front.url}${FILES}?path=/a`, {
      method: 'PUT',
      body,
      headers: { ...BEARER, 'content-type': OCTETS },
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(seen.map((s) => s.prefer)).toEqual(['code=413']);
  });

  it("refuses another Content-Type with Prism's 415, never sending it the body", async () => {
    seen.length = 0;
    const response = await fetch(`${front.url}${FILES}?path=/a`, {
      method: 'PUT',
      body: 'secret',
      headers: { ...BEARER, 'content-type': 'text/plain' },
    });
    expect(response.status).toBe(415);
    expect(seen).toEqual([{ prefer: 'code=415', body: PLACEHOLDER, type: OCTETS }]);
  });
});
