import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { expect, test } from 'vitest';
import { FileError } from '../../src/computers/files/driver.js';
import { DOWNLOAD_BUFFER_BYTES, firstFileStream } from '../../src/computers/files/tar-read.js';

const PIECE = 256 * 1024;

/** A tar of entries, made by tar-stream (pax headers for long or non-ASCII names). */
async function tarOf(entries: [tar.Headers, Buffer?][]): Promise<Buffer> {
  const pack = tar.pack();
  for (const [header, body] of entries) pack.entry(header, body);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The bytes in pieces of `size` (a socket's chunks fall anywhere). */
const inPieces = (bytes: Buffer, size: number) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
      bytes.subarray(i * size, (i + 1) * size),
    ),
  );

async function bodyOf(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Buffer; sizes: number[] }> {
  const sizes: number[] = [];
  const chunks: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    sizes.push(chunk.length);
    chunks.push(Buffer.from(chunk));
  }
  return { bytes: Buffer.concat(chunks), sizes };
}

test.each([
  ['a short name', 'a.bin', 1],
  ['a long name (pax header)', `${'d'.repeat(120)}/${'f'.repeat(120)}.bin`, 7],
  ['a name not in ASCII (pax header)', 'é.bin', 1000],
  ['a short name, in 64 KiB pieces', 'a.bin', 64 * 1024],
])(
  'the first file of a tar with %s: its body whole, as slices of the pieces (no copy), the rest unread',
  async (_, name, piece) => {
    const body = Buffer.from(new Uint8Array(2 * PIECE + 123).map((_, at) => at % 251));
    const archive = await tarOf([
      [{ name, size: body.length }, body],
      [{ name: 'next.txt' }, Buffer.from('next')],
    ]);
    let closed = 0;
    const source = inPieces(archive, piece);
    const got = await bodyOf(firstFileStream(source, () => closed++));
    expect(got.bytes.equals(body)).toBe(true);
    expect(got.sizes.every((size) => size <= piece)).toBe(true);
    expect(closed).toBe(1);
  },
);

test('reads ahead of a slow reader up to its buffer, not further', async () => {
  const body = Buffer.alloc(8 * DOWNLOAD_BUFFER_BYTES, 1);
  const archive = await tarOf([[{ name: 'a', size: body.length }, body]]);
  const source = inPieces(archive, 64 * 1024);
  const stream = firstFileStream(source, () => {});
  await new Promise((resolve) => setTimeout(resolve, 50));
  // Read ahead: the buffer plus the chunk in hand, and the source's own high-water mark.
  expect(source.isPaused()).toBe(true);
  const reader = stream.getReader();
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
  }
  expect(bytes).toBe(body.length);
});

test('an empty file', async () => {
  const archive = await tarOf([[{ name: 'empty', size: 0 }, Buffer.alloc(0)]]);
  expect((await bodyOf(firstFileStream(inPieces(archive, 100), () => {}))).bytes.length).toBe(0);
});

test.each([
  [
    'cut short inside the file',
    async () => (await tarOf([[{ name: 'a', size: 1000 }, Buffer.alloc(1000)]])).subarray(0, 900),
  ],
  ['a directory first', async () => tarOf([[{ name: 'd', type: 'directory' }]])],
  ['not a tar', async () => Buffer.alloc(1024, 1)],
  [
    'cut short inside a pax header',
    async () => (await tarOf([[{ name: 'é', size: 5 }, Buffer.from('hello')]])).subarray(0, 600),
  ],
  ['empty', async () => Buffer.alloc(0)],
])('%s: unavailable', async (_, make) => {
  const stream = firstFileStream(inPieces(await make(), 100), () => {});
  const failure = await bodyOf(stream).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(FileError);
  expect((failure as FileError).reason).toBe('unavailable');
});

test('cancelled by its reader: closed once', async () => {
  const body = Buffer.alloc(4 * PIECE);
  const archive = await tarOf([[{ name: 'a', size: body.length }, body]]);
  let closed = 0;
  const stream = firstFileStream(inPieces(archive, 64 * 1024), () => closed++);
  const reader = stream.getReader();
  await reader.read();
  await reader.cancel();
  expect(closed).toBe(1);
});

test('the source failing fails the stream, and closes once', async () => {
  const archive = await tarOf([[{ name: 'a', size: 4 * PIECE }, Buffer.alloc(4 * PIECE)]]);
  const source = new Readable({ read() {} });
  source.push(archive.subarray(0, 100_000));
  let closed = 0;
  const stream = firstFileStream(source, () => closed++);
  setTimeout(() => source.destroy(new Error('the Engine went away')), 20);
  await expect(bodyOf(stream)).rejects.toThrow('the Engine went away');
  expect(closed).toBe(1);
});
