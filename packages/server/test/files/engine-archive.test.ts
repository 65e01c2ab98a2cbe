import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Docker from 'dockerode';
import tar from 'tar-stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { dockerClient } from '../../src/compose/docker.js';
import { FileError } from '../../src/computers/files/driver.js';
import {
  type EngineSocket,
  engineSocketOf,
  getArchive,
  oneFileTarLength,
  putOneFile,
} from '../../src/computers/files/engine-archive.js';
import { END_OF_TAR, padding, type TarEntryHeader, tarHeader } from '../../src/computers/files/tar-entry.js';

const mtime = new Date('2026-01-02T03:04:05Z');
const dir = (name: string): TarEntryHeader => ({
  name,
  type: 'directory',
  size: 0,
  mode: 0o755,
  mtime,
  uid: 1000,
  gid: 1000,
});
const file = (name: string, size: number): TarEntryHeader => ({
  name,
  type: 'file',
  size,
  mode: 0o644,
  mtime,
  uid: 1000,
  gid: 1000,
});
const signal = () => new AbortController().signal;

/** What the simulated Engine received of one `PUT …/archive`. */
interface Received {
  url: string;
  headers: IncomingMessage['headers'];
  bytes: Buffer;
  /** The body ended as its Content-Length said (not cut short). */
  complete: boolean;
}

/**
 * A simulated Engine on a unix socket: `PUT …/archive` keeps what it receives and answers 200 (or what
 * `answer` says); `GET …/archive` answers `getBody` (or 404 with the Engine's JSON error).
 */
let server: Server;
let socketDir: string;
let engine: EngineSocket;
const received: Received[] = [];
let answer: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
let getBody: Buffer | undefined;

beforeAll(async () => {
  socketDir = mkdtempSync(join(tmpdir(), 'svc-engine-'));
  server = createServer((req, res) => {
    if (answer?.(req, res)) return;
    if (req.method === 'GET') {
      if (!getBody) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ message: 'Could not find the file /nowhere in container x' }));
      }
      res.writeHead(200, { 'content-type': 'application/x-tar' });
      return res.end(getBody);
    }
    const chunks: Buffer[] = [];
    const entry: Received = {
      url: req.url ?? '',
      headers: req.headers,
      bytes: Buffer.alloc(0),
      complete: false,
    };
    received.push(entry);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      entry.complete = true;
      entry.bytes = Buffer.concat(chunks);
      res.writeHead(200).end();
    });
    req.on('close', () => {
      if (!entry.complete) entry.bytes = Buffer.concat(chunks);
    });
  });
  await new Promise<void>((resolve) => server.listen(join(socketDir, 'engine.sock'), resolve));
  engine = { socketPath: join(socketDir, 'engine.sock'), version: 'v1.47' };
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(socketDir, { recursive: true, force: true });
});

/** Every entry of a tar as tar-stream reads it. */
async function entriesOf(bytes: Buffer): Promise<{ header: tar.Headers; body: Buffer }[]> {
  const extract = tar.extract();
  Readable.from([bytes]).pipe(extract as unknown as NodeJS.WritableStream);
  const entries: { header: tar.Headers; body: Buffer }[] = [];
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    entries.push({ header: entry.header, body: Buffer.concat(chunks) });
  }
  return entries;
}

const pieces = (bytes: Buffer, size = 1000) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
      bytes.subarray(i * size, (i + 1) * size),
    ),
  );

test.each([
  ['an empty file', [], file('a.txt', 0)],
  ['one byte', [], file('a.txt', 1)],
  ['a body of one block less one', [], file('a.txt', 511)],
  ['a body of one block', [], file('a.txt', 512)],
  ['a body of one block and one', [dir('d')], file('d/a.txt', 513)],
  [
    'directories and a long name (pax header)',
    [dir('d'), dir(`d/${'e'.repeat(150)}`)],
    file(`d/${'e'.repeat(150)}/${'f'.repeat(120)}`, 70_000),
  ],
  ['a name not in ASCII (pax header)', [], file('fichier-é.txt', 5)],
])('the tar length of %s is the bytes of the tar', (_, directories, header) => {
  const made = Buffer.concat([
    ...directories.map(tarHeader),
    tarHeader(header),
    Buffer.alloc(header.size),
    padding(header.size),
    END_OF_TAR,
  ]);
  expect(oneFileTarLength(directories, header)).toBe(made.length);
  expect(made.length % 512).toBe(0);
});

test('a file goes to the Engine as a tar with Content-Length, its body passed on whole', async () => {
  received.length = 0;
  const body = Buffer.from(new Uint8Array(300_001).map((_, at) => at % 253));
  const directories = [dir('a'), dir('a/b')];
  const header = file('a/b/c.bin', body.length);
  await putOneFile(engine, 'c0ffee', '/home/svc', directories, header, pieces(body, 64 * 1024), signal());
  const [put] = received;
  expect(put?.url).toBe('/v1.47/containers/c0ffee/archive?path=%2Fhome%2Fsvc');
  expect(put?.headers['content-type']).toBe('application/x-tar');
  expect(put?.headers['transfer-encoding']).toBeUndefined();
  expect(Number(put?.headers['content-length'])).toBe(oneFileTarLength(directories, header));
  expect(put?.bytes.length).toBe(oneFileTarLength(directories, header));
  const entries = await entriesOf(put?.bytes ?? Buffer.alloc(0));
  expect(entries.map((e) => [e.header.name, e.header.type, e.header.uid])).toEqual([
    ['a/', 'directory', 1000],
    ['a/b/', 'directory', 1000],
    ['a/b/c.bin', 'file', 1000],
  ]);
  expect(entries[2]?.body.equals(body)).toBe(true);
});

test.each([
  ['shorter', 5000, 'unavailable'],
  ['longer', 15_000, 'too_large'],
])(
  'a body %s than its declared size is refused, and the Engine never gets a whole tar',
  async (_, actual, reason) => {
    received.length = 0;
    const header = file('a.bin', 10_000);
    const failure = await putOneFile(
      engine,
      'c0ffee',
      '/home/svc',
      [],
      header,
      pieces(Buffer.alloc(actual, 7)),
      signal(),
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(FileError);
    expect((failure as FileError).reason).toBe(reason);
    // Cut short (or dropped before it was sent): fewer bytes than the Content-Length, never the end of the tar.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const put of received) {
      expect(put.complete).toBe(false);
      expect(put.bytes.length).toBeLessThanOrEqual(512 + 10_000);
    }
  },
);

test('a body that fails fails the write with its error; an abort with its reason', async () => {
  const failing = new Readable({
    read() {
      this.destroy(new Error('the client went away'));
    },
  });
  await expect(
    putOneFile(engine, 'c0ffee', '/home/svc', [], file('a.bin', 10), failing, signal()),
  ).rejects.toThrow('the client went away');
  const controller = new AbortController();
  const endless = new Readable({ read() {} });
  const put = putOneFile(engine, 'c0ffee', '/home/svc', [], file('a.bin', 10), endless, controller.signal);
  controller.abort(new Error('the request was aborted'));
  await expect(put).rejects.toThrow('the request was aborted');
});

test("the Engine's refusal is thrown as dockerode throws it: statusCode and the Engine's message", async () => {
  answer = (req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'mkdir /home/svc/x: read-only file system' }));
    return true;
  };
  try {
    const failure = await putOneFile(
      engine,
      'c0ffee',
      '/',
      [],
      file('a.bin', 3),
      Readable.from([Buffer.from('abc')]),
      signal(),
    ).catch((error: unknown) => error);
    expect(failure).toMatchObject({ statusCode: 500 });
    expect((failure as Error).message).toMatch(/read-only file system/);
  } finally {
    answer = undefined;
  }
});

test('GET …/archive: the response as it streams, or the refusal with its statusCode', async () => {
  getBody = Buffer.from('a tar');
  try {
    const response = await getArchive(engine, 'c0ffee', '/home/svc/a b.txt', signal());
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('a tar');
  } finally {
    getBody = undefined;
  }
  await expect(getArchive(engine, 'c0ffee', '/nowhere', signal())).rejects.toMatchObject({
    statusCode: 404,
    message: expect.stringMatching(/Could not find the file/),
  });
});

test("the Engine's socket of a dockerode client; none when it reaches the Engine over TCP", () => {
  expect(engineSocketOf(dockerClient('/run/docker.sock'))).toMatchObject({ socketPath: '/run/docker.sock' });
  expect(engineSocketOf(new Docker({ host: '127.0.0.1', port: 2375 }))).toBeUndefined();
});
