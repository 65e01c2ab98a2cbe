import { Readable } from 'node:stream';
import { expect, test } from 'vitest';
import { checkArchive } from '../../src/computers/files/archive-check.js';
import { FileError } from '../../src/computers/files/driver.js';
import { entriesOf, tarOf } from './file-rules.js';

const check = (bytes: Uint8Array, overrides: Partial<Parameters<typeof checkArchive>[1]> = {}) =>
  checkArchive(Readable.from([Buffer.from(bytes)]), {
    maxEntries: 100,
    maxBytes: 1024 * 1024,
    uid: 1000,
    gid: 1001,
    signal: new AbortController().signal,
    ...overrides,
  });

async function drain(checked: ReturnType<typeof checkArchive>): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of checked.tar) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

test('a clean archive is re-emitted with normalized names, the computer user as owner, permission bits only, and implied parents', async () => {
  const checked = check(
    await tarOf([
      [{ name: './', type: 'directory' }],
      [{ name: './a//b/c.txt', uid: 0, gid: 0, mode: 0o4755, uname: 'root' }, 'abc'],
      [{ name: 'a/b/d.txt', type: 'link', linkname: './a/b/c.txt' }],
    ]),
  );
  const out = await entriesOf(await drain(checked));
  expect(out.map((entry) => [entry.name.replace(/\/$/, ''), entry.type, entry.uid])).toEqual([
    ['a', 'directory', 1000],
    ['a/b', 'directory', 1000],
    ['a/b/c.txt', 'file', 1000],
    ['a/b/d.txt', 'link', 1000],
  ]);
  expect(out[3]?.linkname).toBe('a/b/c.txt');
  expect(Buffer.from(out[2]?.body ?? []).toString()).toBe('abc');
  expect(await checked.done).toEqual({ entries: 2, bytes: 3 });
});

test("the header's size is not trusted: a body cut short is refused (bad_archive, malformed)", async () => {
  const whole = await tarOf([[{ name: 'big.bin' }, new Uint8Array(4096)]]);
  const checked = check(whole.subarray(0, 512 + 1000));
  await expect(drain(checked)).rejects.toBeInstanceOf(FileError);
  await expect(checked.done).rejects.toMatchObject({ reason: 'bad_archive', details: { rule: 'malformed' } });
});

test('raw bytes over maxBytes are too_large even when the declared sizes are small', async () => {
  const bytes = await tarOf(
    Array.from(
      { length: 20 },
      (_, at) => [{ name: `d${at}`, type: 'directory' }] as [{ name: string; type: 'directory' }],
    ),
  );
  const checked = check(bytes, { maxBytes: 4096 });
  await expect(drain(checked)).rejects.toBeInstanceOf(FileError);
  await expect(checked.done).rejects.toMatchObject({ reason: 'too_large' });
});

test('an abort stops the check with its reason', async () => {
  const controller = new AbortController();
  const never = new Readable({ read() {} });
  const checked = checkArchive(never, {
    maxEntries: 10,
    maxBytes: 1024,
    uid: 1,
    gid: 1,
    signal: controller.signal,
  });
  controller.abort(new Error('gone'));
  await expect(checked.done).rejects.toThrow('gone');
});
