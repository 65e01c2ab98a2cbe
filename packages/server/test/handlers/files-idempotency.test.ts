import { afterAll, beforeAll, expect, test } from 'vitest';
import { listen } from '../../src/http/node-adapter.js';
import { newId } from '../../src/platform/ids.js';
import { tarOf } from '../files/file-rules.js';
import { errorOf } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { type FilesApp, openFilesApp, query } from './files-support.js';

const OCTET = 'application/octet-stream';
const TAR = 'application/x-tar';
let counter = 0;
const fresh = () => `/home/svc/i${counter++}-${Date.now().toString(36)}`;
const text = (value: string) => new TextEncoder().encode(value);

// An Idempotency-Key on an upload covers its bytes (their SHA-256, hashed as they stream): a retry
// with the same bytes replays without writing, one with other bytes (even of the same length) is 422.
describeEngines('handlers: idempotent uploads cover the bytes', (engine) => {
  let f: FilesApp;
  beforeAll(async () => {
    f = await openFilesApp(engine);
  });
  afterAll(() => f.t.close());

  const upload = (path: string, bytes: Uint8Array, key: string) =>
    f.send('PUT', `${f.files()}${query({ path, parents: true })}`, { body: bytes, contentType: OCTET, key });
  const read = async (path: string) =>
    Buffer.from((await f.send('GET', `${f.files()}${query({ path })}`)).bytes).toString();
  const transfers = (path: string) =>
    f.logs.filter(
      (line) =>
        line.message === 'file transfer' && line.fields.path === path && line.fields.direction === 'in',
    ).length;

  test('the same key and the same bytes: the first answer replayed, nothing written again', async () => {
    const path = `${fresh()}/a.txt`;
    const key = newId();
    const first = await upload(path, text('first'), key);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Changed behind the key's back: a replay must not write it back.
    expect((await upload(path, text('other'), newId())).status).toBe(200);
    const again = await upload(path, text('first'), key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await read(path)).toBe('other');
    expect(transfers(path)).toBe(2);
  });

  test('the same key and other bytes of the SAME length: 422 idempotency_key_reused, nothing written', async () => {
    const path = `${fresh()}/a.txt`;
    const key = newId();
    expect((await upload(path, text('aaaa'), key)).status).toBe(200);
    const other = await upload(path, text('bbbb'), key);
    expect(other.status).toBe(422);
    expect(errorOf(other).code).toBe('idempotency_key_reused');
    expect(await read(path)).toBe('aaaa');
    expect(transfers(path)).toBe(1);
  });

  test('the same key on another path or with another mode: 422 without reading the body', async () => {
    const path = `${fresh()}/a.txt`;
    const key = newId();
    expect((await upload(path, text('x'), key)).status).toBe(200);
    const elsewhere = await upload(`${path}.2`, text('x'), key);
    expect(errorOf(elsewhere).code).toBe('idempotency_key_reused');
    const moded = await f.send('PUT', `${f.files()}${query({ path, parents: true, mode: '0600' })}`, {
      body: text('x'),
      contentType: OCTET,
      key,
    });
    expect(errorOf(moded).code).toBe('idempotency_key_reused');
  });

  test('archives: the same tar replays, another tar is 422', async () => {
    const dir = fresh();
    const key = newId();
    const put = (bytes: Uint8Array) =>
      f.send('PUT', `${f.files()}/archive${query({ path: dir, parents: true })}`, {
        body: bytes,
        contentType: TAR,
        key,
      });
    const tar = await tarOf([[{ name: 'a.txt' }, 'one']]);
    const first = await put(tar);
    expect(first.status).toBe(200);
    const again = await put(tar);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await put(await tarOf([[{ name: 'a.txt' }, 'two']]));
    expect(errorOf(other).code).toBe('idempotency_key_reused');
    expect(await read(`${dir}/a.txt`)).toBe('one');
  });

  test('while the first upload is still streaming: 409 idempotency_key_in_use', async () => {
    const path = `${fresh()}/slow.bin`;
    const key = newId();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let sent = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 1) await gate;
        if (sent === 2) return controller.close();
        sent++;
        controller.enqueue(text('part'));
      },
    });
    const first = f.send('PUT', `${f.files()}${query({ path, parents: true })}`, {
      body: slow,
      contentType: OCTET,
      key,
    });
    await expect.poll(() => sent, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    // The first has claimed the key by the time it reads its body.
    const busy = await upload(path, text('partpart'), key);
    expect(busy.status).toBe(409);
    expect(errorOf(busy).code).toBe('idempotency_key_in_use');
    expect(busy.headers.get('retry-after')).toBe('1');
    release();
    expect((await first).status).toBe(200);
    const replay = await upload(path, text('partpart'), key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  test('a failure before the body was read is not stored: the key may be used again', async () => {
    const path = `${fresh()}/x/a.txt`;
    const key = newId();
    const missing = await f.send('PUT', `${f.files()}${query({ path, parents: false })}`, {
      body: text('a'),
      contentType: OCTET,
      key,
    });
    expect(missing.status).toBe(404);
    const retry = await f.send('PUT', `${f.files()}${query({ path, parents: false })}`, {
      body: text('b'),
      contentType: OCTET,
      key,
    });
    expect(retry.status).toBe(404);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  test('DELETE with a key replays its 204', async () => {
    const path = `${fresh()}/gone.txt`;
    expect((await upload(path, text('g'), newId())).status).toBe(200);
    const key = newId();
    const del = () => f.send('DELETE', `${f.files()}${query({ path })}`, { key });
    const first = await del();
    expect(first.status).toBe(204);
    const again = await del();
    expect(again.status).toBe(204);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  test('through a socket (the body read from the Node request): a 3 MiB upload is whole, its key replays, other bytes are 422', async () => {
    const running = await listen(f.t.app.fetch, { port: 0 });
    try {
      const path = `${fresh()}/big.bin`;
      const bytes = new Uint8Array(3 * 1024 * 1024 + 5).map((_, at) => at % 251);
      const key = newId();
      const send = (body: Uint8Array) =>
        fetch(`${running.url}${f.files()}${query({ path, parents: true })}`, {
          method: 'PUT',
          headers: {
            authorization: `Bearer ${f.team.editor.token}`,
            'content-type': OCTET,
            'idempotency-key': key,
          },
          body: Buffer.from(body),
        });
      const first = await send(bytes);
      expect([first.status, first.status === 200 ? '' : await first.text()]).toEqual([200, '']);
      const again = await send(bytes);
      expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
      const other = bytes.slice();
      other[other.length - 1] = 1;
      const reused = await send(other);
      expect(reused.status).toBe(422);
      const got = await f.send('GET', `${f.files()}${query({ path })}`);
      expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
      expect(transfers(path)).toBe(1);
    } finally {
      await running.close();
    }
  });
});
