import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { expect, test } from 'vitest';
import { BodyTooLargeError, INCOMING_BUFFER_BYTES, IncomingBytes } from '../../src/http/byte-body.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const webOf = (bytes: Uint8Array) => new Response(Buffer.from(bytes)).body;
const nodeOf = (bytes: Uint8Array) =>
  Readable.from([Buffer.from(bytes.subarray(0, 5)), Buffer.from(bytes.subarray(5))]);

test.each([
  ['a web stream', webOf],
  ['a Node stream (the request under the adapter)', nodeOf],
])('over %s: the bytes pass counted, hashed only once asked', async (_, source) => {
  const bytes = new TextEncoder().encode('hello, computer');
  const hashed = new IncomingBytes(source(bytes), 1024);
  hashed.hashBytes();
  expect(new Uint8Array(await new Response(hashed.stream).arrayBuffer())).toEqual(bytes);
  expect([hashed.ended, hashed.bytesRead, hashed.sha256()]).toEqual([true, bytes.length, sha256(bytes)]);

  const unhashed = new IncomingBytes(source(bytes), 1024);
  await unhashed.drain();
  expect(unhashed.ended).toBe(true);
  expect(() => unhashed.sha256()).toThrow(/hashBytes/);
});

test.each([
  ['a web stream', webOf],
  ['a Node stream (the request under the adapter)', nodeOf],
])('over %s: past the limit the stream errors and overLimit is set', async (_, source) => {
  const body = new IncomingBytes(source(new Uint8Array(11)), 10);
  await expect(new Response(body.stream).arrayBuffer()).rejects.toThrow(BodyTooLargeError);
  expect(body.overLimit).toBe(true);
});

test('over a Node stream, reading ahead stops at the buffer size (the body is never held whole); cancelled, the rest is dropped', async () => {
  let produced = 0;
  const piece = Buffer.alloc(64 * 1024);
  // Endless, and on later turns of the loop as a socket's reads are.
  const source = new Readable({
    read() {
      produced += piece.length;
      setImmediate(() => this.push(piece));
    },
  });
  const body = new IncomingBytes(source, 1 << 30);
  const reader = body.stream.getReader();
  await reader.read();
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(produced).toBeLessThan(INCOMING_BUFFER_BYTES + 4 * source.readableHighWaterMark + 2 * piece.length);
  await reader.cancel();
  // Cancelled, the request is not destroyed (its socket would go, and the answer with it): what the
  // client still sends is read and dropped.
  expect(source.destroyed).toBe(false);
  const before = produced;
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(produced).toBeGreaterThan(before);
  expect(source.readableLength).toBeLessThanOrEqual(source.readableHighWaterMark);
  source.destroy();
});
