import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { listen } from '../../src/http/node-adapter.js';
import { entriesOf, tarOf } from '../files/file-rules.js';
import { errorOf } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import {
  allByteValues,
  type ByteAnswer,
  type FilesApp,
  openFilesApp,
  query,
  watchedStream,
} from './files-support.js';

const OCTET = 'application/octet-stream';
const TAR = 'application/x-tar';
/** The upload limit these tests run with (SVC_FILES_MAX_BYTES), so 413 needs no gigabyte. */
const LIMIT = 6 * 1024 * 1024;
/** The files quota of the computers here (the driver's and SVC_FILES_QUOTA_BYTES). */
const QUOTA = 40 * 1024 * 1024;
/** The entries an archive may hold here. */
const MAX_ENTRIES = 20;

/** Rewrites the type flag of a tar's first header (and its checksum): `S` is a GNU sparse file. */
function withTypeFlag(bytes: Uint8Array, flag: string): Uint8Array {
  const copy = Buffer.from(bytes);
  copy[156] = flag.charCodeAt(0);
  copy.fill(0x20, 148, 156);
  let sum = 0;
  for (let at = 0; at < 512; at++) sum += copy[at] as number;
  copy.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return new Uint8Array(copy);
}

let counter = 0;
/** A directory of its own under /home/svc for one test. */
const fresh = () => `/home/svc/t${counter++}-${Date.now().toString(36)}`;
const text = (value: string) => new TextEncoder().encode(value);
/** The error of an answer, with its status and Request-Id checked. */
const failure = (answer: ByteAnswer, status: number) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return errorOf(answer);
};

describeEngines('handlers: files on computers', (engine) => {
  let f: FilesApp;
  beforeAll(async () => {
    f = await openFilesApp(
      engine,
      { SVC_FILES_MAX_BYTES: String(LIMIT), SVC_FILES_QUOTA_BYTES: String(QUOTA) },
      { quotaBytes: QUOTA, maxEntries: MAX_ENTRIES },
    );
  });
  afterAll(() => f.t.close());

  const put = (
    path: string,
    bytes: Uint8Array | ReadableStream<Uint8Array>,
    extra: Record<string, string | boolean> = {},
  ) =>
    f.send('PUT', `${f.files()}${query({ path, parents: true, ...extra })}`, {
      body: bytes,
      contentType: OCTET,
    });
  const get = (path: string) => f.send('GET', `${f.files()}${query({ path })}`);
  const stat = (path: string) => f.send('GET', `${f.files()}/stat${query({ path })}`);

  test.each([
    ['all 256 byte values', allByteValues()],
    ['empty', new Uint8Array()],
    ['5 MB', allByteValues((5 * 1000 * 1000) / 256 + 1)],
  ])('upload then download: %s, byte for byte, with Content-Length and a weak ETag', async (_name, bytes) => {
    const path = `${fresh()}/data.bin`;
    const written = await put(path, bytes);
    expect(written.status).toBe(200);
    expect(written.body.file).toEqual({
      path,
      name: 'data.bin',
      type: 'file',
      size: bytes.length,
      mode: '0644',
      modified_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const read = await get(path);
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe(OCTET);
    expect(read.headers.get('content-length')).toBe(String(bytes.length));
    const mtime = Math.floor(Date.parse(written.body.file.modified_at) / 1000);
    expect(read.headers.get('etag')).toBe(`W/"${bytes.length}-${mtime}"`);
    expect(Buffer.from(read.bytes).equals(Buffer.from(bytes))).toBe(true);
  });

  test('a streamed (chunked) upload is written whole; mode and path normalisation are applied', async () => {
    const dir = fresh();
    const { stream } = watchedStream(allByteValues(1000), 1000);
    const written = await put(`${dir}/./x/../run.sh`, stream, { mode: '755' });
    expect(written.status).toBe(200);
    expect(written.body.file).toMatchObject({ path: `${dir}/run.sh`, size: 256_000, mode: '0755' });
    expect((await stat(`${dir}/run.sh`)).body.file).toMatchObject({ mode: '0755', type: 'file' });
  });

  test('stat: a file, a directory, a symlink as itself; 404 with details.path', async () => {
    const dir = fresh();
    await put(`${dir}/a.txt`, text('hello'));
    f.driver.files.symlink({ id: f.computer } as never, `${dir}/link`, 'a.txt');
    expect((await stat(`${dir}/a.txt`)).body.file).toMatchObject({ type: 'file', size: 5, name: 'a.txt' });
    expect((await stat(dir)).body.file).toMatchObject({ type: 'directory', path: dir });
    expect((await stat(`${dir}/link`)).body.file).toMatchObject({ type: 'symlink', link_target: 'a.txt' });
    const missing = failure(await stat(`${dir}/nope`), 404);
    expect(missing).toMatchObject({ code: 'not_found', details: { path: `${dir}/nope` } });
  });

  test('list: by name in byte order, paged with signed cursors bound to the path', async () => {
    const dir = fresh();
    const names = ['b', 'B', 'a', '_', 'A.txt', 'é', 'z'];
    for (const name of names) await put(`${dir}/${name}`, text(name));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await f.send(
        'GET',
        `${f.files()}/entries${query({ path: dir, limit: 3, ...(cursor ? { cursor } : {}) })}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.files.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.files.map((file: { name: string }) => file.name));
      expect(page.body.has_more).toBe(page.body.next_cursor !== null);
      cursor = page.body.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    const first = await f.send('GET', `${f.files()}/entries${query({ path: dir, limit: 1 })}`);
    const other = await f.send(
      'GET',
      `${f.files()}/entries${query({ path: '/home/svc', limit: 1, cursor: first.body.next_cursor })}`,
    );
    expect(failure(other, 400).code).toBe('invalid_argument');
  });

  test('delete: a file (204, then 404), a directory only when empty or recursive', async () => {
    const dir = fresh();
    await put(`${dir}/sub/a.txt`, text('a'));
    const del = (path: string, extra: Record<string, boolean> = {}) =>
      f.send('DELETE', `${f.files()}${query({ path, ...extra })}`);
    expect(failure(await del(dir), 400)).toMatchObject({
      code: 'invalid_argument',
      details: { field_violations: [{ field: 'path' }] },
    });
    expect((await del(`${dir}/sub/a.txt`)).status).toBe(204);
    expect(failure(await get(`${dir}/sub/a.txt`), 404).details.path).toBe(`${dir}/sub/a.txt`);
    expect((await del(dir, { recursive: true })).status).toBe(204);
    expect(failure(await stat(dir), 404).code).toBe('not_found');
    expect(failure(await del(dir), 404).details.path).toBe(dir);
  });

  test.each([
    ['not absolute', 'GET', 'home/svc/a', 'query.path'],
    ['over 4096 bytes', 'GET', `/home/${'x'.repeat(4100)}`, 'query.path'],
    ['a directory where a file is read (is_directory)', 'GET', '/home/svc', 'path'],
    ['outside /home for a write (read_only)', 'PUT', '/etc/passwd', 'path'],
    ['the root for a write (read_only)', 'PUT', '/', 'path'],
  ])('400 invalid_argument: %s', async (_name, method, path, field) => {
    const answer =
      method === 'PUT'
        ? await f.send('PUT', `${f.files()}${query({ path })}`, { body: text('x'), contentType: OCTET })
        : await get(path);
    const error = failure(answer, 400);
    expect(error.code).toBe('invalid_argument');
    expect(error.details.field_violations[0].field).toBe(field);
  });

  test('400 invalid_argument: a file where a directory is listed (not_directory), a FIFO (special_file), a bad mode', async () => {
    const dir = fresh();
    await put(`${dir}/a.txt`, text('a'));
    const listed = failure(
      await f.send('GET', `${f.files()}/entries${query({ path: `${dir}/a.txt` })}`),
      400,
    );
    expect(listed.details.field_violations[0].field).toBe('path');
    f.driver.files.mkfifo({ id: f.computer } as never, `${dir}/pipe`);
    const fifo = failure(await get(`${dir}/pipe`), 400);
    expect(fifo.details.field_violations[0].field).toBe('path');
    const written = failure(await put(`${dir}/pipe`, text('x')), 400);
    expect(written.details.field_violations[0].field).toBe('path');
    const mode = failure(await put(`${dir}/b.txt`, text('b'), { mode: '0999' }), 400);
    expect(mode.details.field_violations[0].field).toBe('query.mode');
  });

  test('a symlink to / resolves inside the computer: writing through it stays read-only outside /home', async () => {
    const dir = fresh();
    await put(`${dir}/keep.txt`, text('k'));
    f.driver.files.symlink({ id: f.computer } as never, `${dir}/slash`, '../../../../..');
    const through = failure(await put(`${dir}/slash/etc/evil`, text('x'), { parents: false }), 400);
    expect(through.details.field_violations[0].field).toBe('path');
    const hostname = await get(`${dir}/slash/etc/hostname`);
    expect(hostname.status).toBe(200);
  });

  test('415: a body that is not the declared media type, or an archive with a Content-Encoding', async () => {
    const dir = fresh();
    const json = await f.send('PUT', `${f.files()}${query({ path: `${dir}/a` })}`, {
      body: text('{}'),
      contentType: 'application/json',
    });
    expect(failure(json, 415).code).toBe('unsupported_media_type');
    const none = await f.send('PUT', `${f.files()}${query({ path: `${dir}/a` })}`, { body: text('x') });
    expect(failure(none, 415).code).toBe('unsupported_media_type');
    const tar = await tarOf([[{ name: 'a.txt' }, 'a']]);
    const encoded = await f.send('PUT', `${f.files()}/archive${query({ path: dir, parents: true })}`, {
      body: gzipSync(tar),
      contentType: TAR,
      headers: { 'content-encoding': 'gzip' },
    });
    expect(failure(encoded, 415).code).toBe('unsupported_media_type');
    const octet = await f.send('PUT', `${f.files()}/archive${query({ path: dir, parents: true })}`, {
      body: tar,
      contentType: OCTET,
    });
    expect(failure(octet, 415).code).toBe('unsupported_media_type');
    expect(failure(await stat(`${dir}/a`), 404).code).toBe('not_found');
  });

  test('413 before reading when Content-Length is over the limit: nothing read, nothing written', async () => {
    const path = `${fresh()}/big.bin`;
    const { stream, seen } = watchedStream(new Uint8Array(1024));
    const answer = await f.send('PUT', `${f.files()}${query({ path, parents: true })}`, {
      body: stream,
      contentType: OCTET,
      headers: { 'content-length': String(LIMIT + 1) },
    });
    const error = failure(answer, 413);
    expect(error).toMatchObject({ code: 'payload_too_large', details: { limit_bytes: LIMIT } });
    expect(answer.headers.get('connection')).toBe('close');
    expect(seen.pulled).toBe(0);
    expect(failure(await stat(path), 404).code).toBe('not_found');
  });

  test('413 while counting a chunked body past the limit; nothing is left', async () => {
    const path = `${fresh()}/big.bin`;
    const { stream } = watchedStream(new Uint8Array(LIMIT + 1), 256 * 1024);
    const error = failure(await put(path, stream), 413);
    expect(error).toMatchObject({ code: 'payload_too_large', details: { limit_bytes: LIMIT } });
    expect(failure(await stat(path), 404).code).toBe('not_found');
  });

  test('through a socket, a chunked body past the limit is answered 413 (the body read from the Node request)', async () => {
    const running = await listen(f.t.app.fetch, { port: 0 });
    try {
      const path = `${fresh()}/big.bin`;
      const { stream } = watchedStream(new Uint8Array(LIMIT + 1), 256 * 1024);
      const answer = await fetch(`${running.url}${f.files()}${query({ path, parents: true })}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${f.team.editor.token}`, 'content-type': OCTET },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(answer.status).toBe(413);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
      expect(failure(await stat(path), 404).code).toBe('not_found');
    } finally {
      await running.close();
    }
  });

  test('409 invalid_state on a computer that is not running, operation_in_progress while one holds it', async () => {
    const id = await f.newComputer();
    const stop = await f.t.call('POST', `/v1/workspaces/${f.team.workspace.id}/computers/${id}/stop`, {
      token: f.team.editor.token,
    });
    const busy = await f.send('GET', `${f.files(id)}/stat${query({ path: '/home' })}`);
    expect(failure(busy, 409)).toMatchObject({
      code: 'operation_in_progress',
      details: { operation_id: stop.body.operations[0].id },
    });
    await f.settle(stop.body.operations[0].id);
    for (const answer of [
      await f.send('GET', `${f.files(id)}/stat${query({ path: '/home' })}`),
      await f.send('PUT', `${f.files(id)}${query({ path: '/home/svc/a' })}`, {
        body: text('a'),
        contentType: OCTET,
      }),
      await f.send('GET', `${f.files(id)}/archive${query({ path: '/home' })}`),
    ])
      expect(failure(answer, 409)).toMatchObject({
        code: 'invalid_state',
        details: { current_state: 'stopped', allowed_from: ['running'] },
      });
  });

  test('a viewer is refused (403), a non-member and an unknown computer get 404', async () => {
    const path = '/home/svc';
    const viewer = await f.send('GET', `${f.files()}/entries${query({ path })}`, {
      token: f.team.viewer.token,
    });
    expect(failure(viewer, 403).code).toBe('permission_denied');
    const upload = await f.send('PUT', `${f.files()}${query({ path: '/home/svc/v' })}`, {
      token: f.team.viewer.token,
      body: text('v'),
      contentType: OCTET,
    });
    expect(failure(upload, 403).code).toBe('permission_denied');
    const outsider = await f.send('GET', `${f.files()}/entries${query({ path })}`, {
      token: f.team.outsider.token,
    });
    expect(failure(outsider, 404).code).toBe('not_found');
    const unknown = await f.send('GET', `${f.files('nope-box')}/entries${query({ path })}`);
    expect(failure(unknown, 404).code).toBe('not_found');
  });

  test('archive round trip: a tree up as tar, then down as tar with the directory name first', async () => {
    const dir = fresh();
    const tar = await tarOf([
      [{ name: 'src/', type: 'directory' }],
      [{ name: 'src/main.c', mode: 0o644 }, 'int main() { return 0; }\n'],
      [{ name: 'src/bytes.bin' }, allByteValues()],
      [{ name: 'src/link', type: 'symlink', linkname: 'main.c' }],
    ]);
    const up = await f.send('PUT', `${f.files()}/archive${query({ path: dir, parents: true })}`, {
      body: tar,
      contentType: TAR,
    });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.archive).toEqual({ path: dir, entries: 4, bytes: 25 + 256 });
    const down = await f.send('GET', `${f.files()}/archive${query({ path: `${dir}/src` })}`);
    expect(down.status).toBe(200);
    expect(down.headers.get('content-type')).toBe(TAR);
    const entries = await entriesOf(down.bytes);
    const byName = new Map(entries.map((entry) => [entry.name.replace(/\/$/, ''), entry]));
    expect([...byName.keys()].sort()).toEqual(['src', 'src/bytes.bin', 'src/link', 'src/main.c']);
    expect(Buffer.from(byName.get('src/bytes.bin')?.body ?? []).equals(Buffer.from(allByteValues()))).toBe(
      true,
    );
    expect(byName.get('src/link')).toMatchObject({ type: 'symlink', linkname: 'main.c' });
    expect(Buffer.from((await get(`${dir}/src/main.c`)).bytes).toString()).toBe('int main() { return 0; }\n');
    const notDir = failure(
      await f.send('GET', `${f.files()}/archive${query({ path: `${dir}/src/main.c` })}`),
      400,
    );
    expect(notDir.details.field_violations[0].field).toBe('path');
  });

  const attacks: [string, () => Promise<Uint8Array>, string | undefined][] = [
    ['absolute', () => tarOf([[{ name: '/etc/passwd' }, 'x']]), '/etc/passwd'],
    ['dot_dot', () => tarOf([[{ name: '../../etc/passwd' }, 'x']]), '../../etc/passwd'],
    [
      'special_file',
      () => tarOf([[{ name: 'dev', type: 'character-device', devmajor: 1, devminor: 3 }]]),
      'dev',
    ],
    ['hard_link', () => tarOf([[{ name: 'h', type: 'link', linkname: '/etc/shadow' }]]), 'h'],
    [
      'under_symlink',
      () => tarOf([[{ name: 'l', type: 'symlink', linkname: '/etc' }], [{ name: 'l/passwd' }, 'x']]),
      'l/passwd',
    ],
    ['entry_type', async () => withTypeFlag(await tarOf([[{ name: 'sparse' }, 'x']]), 'S'), 'sparse'],
    ['compressed', async () => gzipSync(await tarOf([[{ name: 'a' }, 'a']])), undefined],
    [
      'too_many_entries',
      () =>
        tarOf(
          Array.from(
            { length: MAX_ENTRIES + 1 },
            (_, at) => [{ name: `f${at}` }, 'x'] as [{ name: string }, string],
          ),
        ),
      undefined,
    ],
  ];
  test.each(attacks)(
    'a tar breaking the %s rule is refused: 400 on body with details.rule',
    async (rule, make, entry) => {
      const dir = fresh();
      const answer = await f.send('PUT', `${f.files()}/archive${query({ path: dir, parents: true })}`, {
        body: await make(),
        contentType: TAR,
      });
      const error = failure(answer, 400);
      expect(error.code).toBe('invalid_argument');
      expect(error.details.field_violations[0].field).toBe('body');
      expect(error.details.rule).toBe(rule);
      if (entry !== undefined) expect(error.details.entry).toBe(entry);
      const outside = await get('/etc/passwd');
      expect(outside.status === 404 || !Buffer.from(outside.bytes).toString().includes('x\n')).toBe(true);
    },
  );

  test('403 quota_exceeded when the files under /home would pass the quota, with details.limit_bytes', async () => {
    const dir = fresh();
    const id = await f.newComputer();
    const chunk = new Uint8Array(5 * 1024 * 1024);
    const put5 = (name: string) =>
      f.send('PUT', `${f.files(id)}${query({ path: `${dir}/${name}`, parents: true })}`, {
        body: chunk,
        contentType: OCTET,
      });
    let answer = await put5('0');
    for (let at = 1; answer.status === 200 && at < 10; at++) answer = await put5(String(at));
    expect(failure(answer, 403)).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'files_bytes_per_computer', limit_bytes: QUOTA },
    });
  });

  test('through a socket, a refusal sent before the body is read reaches a client still sending it, every time', async () => {
    // The server answers without reading the body (a missing directory, a declared size over the
    // limit), or stops reading it (a compressed archive), while the client is still sending: the
    // client must get that answer, in the published shape, and not a connection reset.
    const running = await listen(f.t.app.fetch, { port: 0 });
    /** A body of `bytes` in 64 KiB pieces (starting with `head`), as fast as the connection takes them. */
    const endless = (bytes: number, head?: Uint8Array) => {
      let left = bytes;
      const piece = new Uint8Array(64 * 1024);
      if (head) piece.set(head);
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (left <= 0) return controller.close();
          const next = piece.subarray(0, Math.min(piece.length, left));
          left -= next.length;
          controller.enqueue(next);
        },
      });
    };
    const send = (path: string, declared: number, parents: boolean, archive = false) =>
      fetch(`${running.url}${f.files()}${archive ? '/archive' : ''}${query({ path, parents })}`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${f.team.editor.token}`,
          'content-type': archive ? TAR : OCTET,
          'content-length': String(declared),
        },
        body: endless(declared, archive ? gzipSync(new Uint8Array(1024)) : undefined),
        duplex: 'half',
      } as RequestInit);
    try {
      const cases: Array<[string, () => Promise<Response>, number, string]> = [
        ['a missing directory', () => send(`${fresh()}/missing/a.bin`, LIMIT, false), 404, 'not_found'],
        ['over the limit', () => send(`${fresh()}/a.bin`, LIMIT + 1, true), 413, 'payload_too_large'],
        // Refused on its first bytes: the handler stops reading, and the answer must still go out.
        ['a compressed archive', () => send(fresh(), LIMIT, true, true), 400, 'invalid_argument'],
      ];
      for (const [name, attempt, status, code] of cases)
        for (let round = 0; round < 8; round++) {
          // fetch's Response is not the global one here (the Node adapter replaces it): told by its status.
          const answer = await attempt().catch((error: unknown) => error as Error);
          const got = 'status' in answer ? answer.status : `${answer} (${(answer as Error).cause})`;
          expect(got, `${name}, round ${round}`).toBe(status);
          const body = (await (answer as Response).json()) as { error: { code: string } };
          expect(body.error.code).toBe(code);
        }
    } finally {
      await running.close();
    }
  });

  test('a download the client abandons is cancelled: its audit line says completed: false', async () => {
    const path = `${fresh()}/large.bin`;
    expect((await put(path, new Uint8Array(5 * 1024 * 1024))).status).toBe(200);
    const running = await listen(f.t.app.fetch, { port: 0 });
    try {
      const client = new AbortController();
      const response = await fetch(`${running.url}${f.files()}${query({ path })}`, {
        headers: { authorization: `Bearer ${f.team.editor.token}` },
        signal: client.signal,
      });
      expect(response.status).toBe(200);
      const reader = response.body?.getReader();
      await reader?.read();
      client.abort();
      await expect
        .poll(
          () =>
            f.logs.find(
              (line) =>
                line.message === 'file transfer' &&
                line.fields.path === path &&
                line.fields.direction === 'out',
            ),
          { timeout: 5000 },
        )
        .toMatchObject({ fields: { completed: false } });
      const line = f.logs.find((l) => l.fields.path === path && l.fields.direction === 'out');
      expect(line?.fields.bytes as number).toBeLessThan(5 * 1024 * 1024);
    } finally {
      await running.close();
    }
  });

  test('one audit line per transfer: computer, path, direction, kind, bytes, duration, never the content', async () => {
    const path = `${fresh()}/secret.txt`;
    const secret = 'the content is never logged';
    const up = await put(path, text(secret));
    const down = await get(path);
    expect(down.status).toBe(200);
    const lines = f.logs.filter((line) => line.message === 'file transfer' && line.fields.path === path);
    expect(lines.map((line) => [line.fields.direction, line.fields.kind, line.fields.bytes])).toEqual([
      ['in', 'file', secret.length],
      ['out', 'file', secret.length],
    ]);
    expect(lines[0]?.fields).toMatchObject({
      computer_id: f.computer,
      completed: true,
      duration_ms: expect.any(Number),
    });
    expect(JSON.stringify(f.logs)).not.toContain(secret);
    expect(up.status).toBe(200);
  });
});
