import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { expect, test } from 'vitest';
import { FileError } from '../../src/files/driver.js';
import { ENGINE_CHUNK_BYTES } from '../../src/files/tar-entry.js';
import { firstFileBody, joinedStream } from '../../src/files/tar-read.js';

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
])(
  'the first file of a tar with %s: its body whole, in large pieces, the rest unread',
  async (_, name, piece) => {
    const body = Buffer.from(new Uint8Array(2 * ENGINE_CHUNK_BYTES + 123).map((_, at) => at % 251));
    const archive = await tarOf([
      [{ name, size: body.length }, body],
      [{ name: 'next.txt' }, Buffer.from('next')],
    ]);
    let closed = 0;
    const got = await bodyOf(joinedStream(firstFileBody(inPieces(archive, piece)), () => closed++));
    expect(got.bytes.equals(body)).toBe(true);
    expect(got.sizes.slice(0, -1).every((size) => size >= ENGINE_CHUNK_BYTES)).toBe(true);
    expect(closed).toBe(1);
  },
);

test('an empty file', async () => {
  const archive = await tarOf([[{ name: 'empty', size: 0 }, Buffer.alloc(0)]]);
  expect((await bodyOf(joinedStream(firstFileBody(inPieces(archive, 100)), () => {}))).bytes.length).toBe(0);
});

test.each([
  [
    'cut short inside the file',
    async () => (await tarOf([[{ name: 'a', size: 1000 }, Buffer.alloc(1000)]])).subarray(0, 900),
  ],
  ['a directory first', async () => tarOf([[{ name: 'd', type: 'directory' }]])],
  ['not a tar', async () => Buffer.alloc(1024, 1)],
])('%s: unavailable', async (_, make) => {
  const stream = joinedStream(firstFileBody(inPieces(await make(), 100)), () => {});
  const failure = await bodyOf(stream).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(FileError);
  expect((failure as FileError).reason).toBe('unavailable');
});

test('cancelled by its reader: closed once', async () => {
  const body = Buffer.alloc(4 * ENGINE_CHUNK_BYTES);
  const archive = await tarOf([[{ name: 'a', size: body.length }, body]]);
  let closed = 0;
  const stream = joinedStream(firstFileBody(inPieces(archive, 64 * 1024)), () => closed++);
  const reader = stream.getReader();
  await reader.read();
  await reader.cancel();
  expect(closed).toBe(1);
});
