// Files on computers: every files operation, bytes in and out. Byte bodies go through the contract
// client's fetch like every call (the harness checks a download's Content-Type, Content-Length and ETag;
// errors in the envelope), but never through `prism proxy` on a server run: it re-encodes a binary body
// as UTF-8 (stoplightio/prism#1321), so the gateway sends byte operations to the server directly.
//
// What holds on both targets: each operation answers 2xx in the spec's shape, a download is bytes of
// its type with its headers, another Content-Type is 415 and a body over the limit (by Content-Length)
// 413, in the error envelope. What needs state (bytes in equal bytes out, an archive's entries coming
// back, a listing that pages) is `statefulIt`: the mock is stateless, it answers the spec's examples.
import { request as httpRequest } from 'node:http';
import { byteRequestBody } from '@svc/contract';
import { expect, it } from 'vitest';
import { responseViolations } from '../../src/validate.js';
import { fx, key } from '../support/fixtures.js';
import { contractClient, recordingFetch, statefulIt } from '../support/harness.js';
import { document, matchOperation } from '../support/spec-index.js';
import { makeTar, readTar } from '../support/tar.js';
import { baseUrl, onMock } from '../support/target.js';

const FILES = '/workspaces/{workspace}/computers/{computer}/files';
const OCTETS = 'application/octet-stream';
const TAR = 'application/x-tar';
/** Every byte value, twice, in an order no text encoding keeps: the bytes a round trip must return. */
const EVERY_BYTE = new Uint8Array(512).map((_, i) => (i * 7 + 3) % 256);
const ETAG = /^W\/"[0-9]+-[0-9]+"$/;

// biome-ignore lint/suspicious/noExplicitAny: byte bodies are sent raw; the typed client types JSON calls
type Untyped = any;

export function filesSuite(): void {
  const dir = `/home/svc/contract-${Date.now().toString(36)}`;
  const file = `${dir}/bytes.bin`;
  const at = () => ({ workspace: fx.workspace, computer: fx.computer });
  /** The access token the client sends (for the raw request of the 413 test). */
  let authorization = '';
  const client = () =>
    contractClient({
      fetch: (request: Request) => {
        authorization = request.headers.get('Authorization') ?? authorization;
        return recordingFetch(baseUrl())(request);
      },
    } as Untyped);
  const put = (path: string, query: Record<string, string>, body: Uint8Array, type: string) =>
    (client().PUT as Untyped)(path, {
      params: { path: at(), query, header: { 'Idempotency-Key': key() } },
      body,
      bodySerializer: (raw: unknown) => raw,
      headers: { 'Content-Type': type },
    }) as Promise<{ data?: Untyped; error?: Untyped; response: Response }>;
  const download = (path: string, query: Record<string, string>) =>
    (client().GET as Untyped)(path, { params: { path: at(), query }, parseAs: 'arrayBuffer' }) as Promise<{
      data?: ArrayBuffer;
      response: Response;
    }>;

  it('uploadComputerFile takes application/octet-stream (every byte value) and answers the file', async () => {
    const { data, response } = await put(FILES, { path: file, parents: 'true' }, EVERY_BYTE, OCTETS);
    expect(response.status).toBe(200);
    expect(data.file.type).toBe('file');
    if (!onMock) expect(data.file).toMatchObject({ path: file, size: EVERY_BYTE.length });
  });

  it('downloadComputerFile answers bytes with Content-Type, Content-Length and a weak ETag', async () => {
    const { data, response } = await download(FILES, { path: file });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe(OCTETS);
    const bytes = new Uint8Array(data ?? new ArrayBuffer(0));
    expect(response.headers.get('Content-Length')).toBe(String(bytes.length));
    expect(response.headers.get('ETag')).toMatch(ETAG);
  });

  statefulIt('bytes in equal bytes out: the download is the upload, byte for byte', async () => {
    const { data } = await download(FILES, { path: file });
    expect(Buffer.from(data ?? new ArrayBuffer(0)).equals(Buffer.from(EVERY_BYTE))).toBe(true);
  });

  statefulIt('the ETag changes when the file is written again, and Content-Length follows', async () => {
    const before = (await download(FILES, { path: file })).response.headers.get('ETag');
    // Longer, so the weak ETag (size and mtime) changes even within the same second.
    const longer = new Uint8Array([...EVERY_BYTE, 0, 255]);
    expect((await put(FILES, { path: file }, longer, OCTETS)).response.status).toBe(200);
    const after = await download(FILES, { path: file });
    expect(after.response.headers.get('ETag')).not.toBe(before);
    expect(after.response.headers.get('Content-Length')).toBe(String(longer.length));
    expect(Buffer.from(after.data ?? new ArrayBuffer(0)).equals(Buffer.from(longer))).toBe(true);
    await put(FILES, { path: file }, EVERY_BYTE, OCTETS);
  });

  it('getComputerFile answers what the path is', async () => {
    const { data, response } = await (client().GET as Untyped)(`${FILES}/stat`, {
      params: { path: at(), query: { path: file } },
    });
    expect(response.status).toBe(200);
    expect(data.file.name).toBeTruthy();
    if (!onMock) expect(data.file).toMatchObject({ path: file, type: 'file', size: EVERY_BYTE.length });
  });

  it('listComputerFiles answers a page of entries: files, next_cursor, has_more', async () => {
    const { data, response } = await (client().GET as Untyped)(`${FILES}/entries`, {
      params: { path: at(), query: { path: onMock ? '/home/svc' : dir, limit: 10 } },
    });
    expect(response.status).toBe(200);
    expect(Array.isArray(data.files)).toBe(true);
    expect(data.next_cursor === null).toBe(data.has_more === false);
    if (!onMock) expect(data.files.map((f: { name: string }) => f.name)).toContain('bytes.bin');
  });

  statefulIt('listComputerFiles pages by name with limit and cursor, every entry once', async () => {
    for (const name of ['a', 'b', 'c']) await put(FILES, { path: `${dir}/page-${name}` }, EVERY_BYTE, OCTETS);
    const names: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { data } = await (client().GET as Untyped)(`${FILES}/entries`, {
        params: { path: at(), query: { path: dir, limit: 2, ...(cursor ? { cursor } : {}) } },
      });
      expect(data.files.length).toBeLessThanOrEqual(2);
      names.push(...data.files.map((f: { name: string }) => f.name));
      if (!data.has_more) break;
      cursor = data.next_cursor;
    }
    expect(names).toEqual(['bytes.bin', 'page-a', 'page-b', 'page-c']);
  });

  const tree = [
    { name: 'src/' },
    { name: 'src/main.c', content: new TextEncoder().encode('int main(void) { return 0; }\n') },
    { name: 'src/every.bin', content: EVERY_BYTE },
  ];

  it('uploadComputerArchive takes application/x-tar and answers what it wrote', async () => {
    const { data, response } = await put(`${FILES}/archive`, { path: dir }, makeTar(tree), TAR);
    expect(response.status).toBe(200);
    expect(data.archive.entries).toBeGreaterThan(0);
    if (!onMock) expect(data.archive).toMatchObject({ path: dir, entries: 3 });
  });

  it('downloadComputerArchive answers application/x-tar, an archive tar can read', async () => {
    const { data, response } = await download(`${FILES}/archive`, {
      path: onMock ? '/home/svc/src' : `${dir}/src`,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe(TAR);
    const entries = readTar(new Uint8Array(data ?? new ArrayBuffer(0)));
    expect(entries.length).toBeGreaterThan(0);
    // Names start with the directory's own: its entry (`src/`, or `src` with the directory type flag) and
    // what is in it (`src/main.c`).
    const outside = entries.map((e) => e.name).filter((name) => name !== 'src' && !name.startsWith('src/'));
    expect(outside).toEqual([]);
  });

  statefulIt(
    'an archive round trip: its files come back byte for byte, in a file and in an archive',
    async () => {
      const { data } = await download(FILES, { path: `${dir}/src/every.bin` });
      expect(Buffer.from(data ?? new ArrayBuffer(0)).equals(Buffer.from(EVERY_BYTE))).toBe(true);
      const archive = await download(`${FILES}/archive`, { path: `${dir}/src` });
      const entries = readTar(new Uint8Array(archive.data ?? new ArrayBuffer(0)));
      const byName = new Map(entries.map((e) => [e.name.replace(/\/$/, ''), e.content]));
      expect([...byName.keys()].sort()).toEqual(['src', 'src/every.bin', 'src/main.c']);
      for (const { name, content } of tree.filter((e) => e.content))
        expect(Buffer.from(byName.get(name) ?? []).equals(Buffer.from(content ?? [])), name).toBe(true);
    },
  );

  it.each([
    ['uploadComputerFile', FILES, 'application/json'],
    ['uploadComputerFile', FILES, TAR],
    ['uploadComputerArchive', `${FILES}/archive`, OCTETS],
  ])('%s of another Content-Type (%s) is 415 unsupported_media_type', async (_id, path, type) => {
    const { error, response } = await put(path, { path: `${dir}/refused` }, EVERY_BYTE, type);
    expect(response.status).toBe(415);
    expect(error.error.code).toBe('unsupported_media_type');
  });

  it.each([['uploadComputerFile'], ['uploadComputerArchive']])(
    '%s over x-svc-max-bytes by Content-Length is 413 payload_too_large, before the body is read',
    async (operationId) => {
      const limit = byteRequestBody(document, operationId)?.maxBytes ?? 0;
      expect(limit).toBeGreaterThan(0);
      const path = operationId === 'uploadComputerFile' ? FILES : `${FILES}/archive`;
      const route = path.replace('{workspace}', fx.workspace).replace('{computer}', fx.computer);
      if (authorization === '') await download(FILES, { path: file }); // the client's token, for this raw request
      const url = new URL(`${baseUrl()}${route}?path=${encodeURIComponent(`${dir}/huge`)}`);
      const answer = await new Promise<{ status: number; headers: Headers; text: string }>(
        (resolve, reject) => {
          // fetch sends the length of what it has: a raw request claims one byte over the limit, sends 1 KiB.
          const req = httpRequest(
            {
              host: url.hostname,
              port: url.port,
              method: 'PUT',
              path: `${url.pathname}${url.search}`,
              headers: {
                Authorization: authorization,
                'Content-Type': operationId === 'uploadComputerFile' ? OCTETS : TAR,
                'Content-Length': String(limit + 1),
                'Idempotency-Key': key(),
              },
            },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (chunk) => {
                text += chunk;
              });
              res.on('end', () => {
                const headers = new Headers();
                for (const [name, value] of Object.entries(res.headers))
                  if (typeof value === 'string') headers.set(name, value);
                resolve({ status: res.statusCode ?? 0, headers, text });
                req.destroy();
              });
            },
          );
          req.on('error', reject);
          req.write(Buffer.alloc(1024));
        },
      );
      expect(answer.status).toBe(413);
      const body = JSON.parse(answer.text);
      expect(body.error.code).toBe('payload_too_large');
      const op = matchOperation('PUT', route) ?? expect.fail(`no operation for PUT ${route}`);
      expect(responseViolations(op, answer, body, { crossChecks: true })).toEqual([]);
    },
  );

  it('deleteComputerFile answers 204', async () => {
    const { response } = await (client().DELETE as Untyped)(FILES, {
      params: {
        path: at(),
        query: { path: onMock ? file : dir, recursive: true },
        header: { 'Idempotency-Key': key() },
      },
    });
    expect(response.status).toBe(204);
  });

  statefulIt('a deleted path is 404 not_found', async () => {
    const { error, response } = await (client().GET as Untyped)(`${FILES}/stat`, {
      params: { path: at(), query: { path: dir } },
    });
    expect(response.status).toBe(404);
    expect(error.error.code).toBe('not_found');
  });
}
