import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { expect, test } from 'vitest';
import { FileError } from '../../src/computers/files/driver.js';
import { ENGINE_CHUNK_BYTES, oneFileTar, type TarEntryHeader } from '../../src/computers/files/tar-entry.js';

const mtime = new Date('2026-01-02T03:04:05Z');
const dir = (name: string): TarEntryHeader => ({
  name,
  type: 'directory',
  size: 0,
  mode: 0o755,
  mtime,
  uid: 1000,
  gid: 1001,
});
const file = (name: string, size: number): TarEntryHeader => ({
  name,
  type: 'file',
  size,
  mode: 0o640,
  mtime,
  uid: 1000,
  gid: 1001,
});
const options = () => ({ maxBytes: 1 << 30, signal: new AbortController().signal });

/** Every entry of a tar as tar-stream reads it: header and body. */
async function read(stream: Readable): Promise<{ header: tar.Headers; body: Buffer }[]> {
  const extract = tar.extract();
  stream.pipe(extract as unknown as NodeJS.WritableStream);
  stream.once('error', (error) => extract.destroy(error));
  const entries: { header: tar.Headers; body: Buffer }[] = [];
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    entries.push({ header: entry.header, body: Buffer.concat(chunks) });
  }
  return entries;
}

test('a one-file tar holds the directories, the file with its owner, mode and time, and its body in large pieces', async () => {
  const body = Buffer.alloc(3 * ENGINE_CHUNK_BYTES + 17, 7);
  const pieces = Array.from({ length: Math.ceil(body.length / 1000) }, (_, i) =>
    body.subarray(i * 1000, (i + 1) * 1000),
  );
  const made = oneFileTar(
    [dir('a'), dir('a/b')],
    file('a/b/c.bin', body.length),
    Readable.from(pieces),
    options(),
  );
  const sizes: number[] = [];
  made.stream.on('data', (chunk: Buffer) => sizes.push(chunk.length));
  const entries = await read(made.stream);
  expect(
    entries.map((e) => [e.header.name, e.header.type, e.header.mode, e.header.uid, e.header.gid]),
  ).toEqual([
    ['a/', 'directory', 0o755, 1000, 1001],
    ['a/b/', 'directory', 0o755, 1000, 1001],
    ['a/b/c.bin', 'file', 0o640, 1000, 1001],
  ]);
  expect(entries[2]?.header.mtime).toEqual(mtime);
  expect(entries[2]?.body.equals(body)).toBe(true);
  expect(sizes.slice(0, -1).every((size) => size >= ENGINE_CHUNK_BYTES)).toBe(true);
  expect(made.failure()).toBeUndefined();
});

test.each([
  ['long', `${'d'.repeat(150)}/${'f'.repeat(99)}`],
  ['longer than ustar holds', `${'d'.repeat(200)}/${'f'.repeat(150)}`],
  ['not ASCII', 'répertoire/fichier-é.txt'],
  ['empty body', 'empty.txt'],
])('a name that is %s comes back whole', async (kind, name) => {
  const size = kind === 'empty body' ? 0 : 5;
  const made = oneFileTar([], file(name, size), Readable.from(size ? [Buffer.from('hello')] : []), options());
  const entries = await read(made.stream);
  expect(entries.map((e) => [e.header.name, e.body.toString()])).toEqual([[name, size ? 'hello' : '']]);
});

test.each([
  ['longer', 4, 'too_large'],
  ['shorter', 6, 'unavailable'],
])('a body %s than declared fails the tar with a FileError', async (_, size, code) => {
  const made = oneFileTar(
    [],
    file('x', size),
    Readable.from([Buffer.from('hel'), Buffer.from('lo')]),
    options(),
  );
  await expect(read(made.stream)).rejects.toThrow();
  expect(made.failure()).toBeInstanceOf(FileError);
  expect((made.failure() as FileError).reason).toBe(code);
});

test('a body past maxBytes fails with too_large', async () => {
  const made = oneFileTar([], file('x', 5), Readable.from([Buffer.from('hello')]), {
    ...options(),
    maxBytes: 4,
  });
  await expect(read(made.stream)).rejects.toThrow();
  expect((made.failure() as FileError).reason).toBe('too_large');
});
