// A terminal's output on its way to the log (design §17): bytes the PTY wrote, cut into chunks of at
// most 64 KiB that never split a UTF-8 character (one waits for its last bytes), each written as text
// when it is UTF-8 without NUL, else as base64 — the same rules as a command's output (design §14).
import type { Schema } from '@svc/contract';
import { incompleteTail, MAX_CHUNK_BYTES } from '../computers/output-log.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One `output` event's data.
 *
 * @example
 * terminalChunk(0, new Uint8Array([0xff])); // { offset: 0, encoding: 'base64', data: '/w==' }
 */
export function terminalChunk(offset: number, bytes: Uint8Array): Schema<'TerminalOutputChunk'> {
  try {
    const text = strictUtf8.decode(bytes);
    if (!text.includes('\0')) return { offset, encoding: 'utf-8', data: text };
  } catch {
    // not UTF-8: base64 below
  }
  return { offset, encoding: 'base64', data: Buffer.from(bytes).toString('base64') };
}

/** The bytes of a chunk as it was written. */
export function chunkBytes(chunk: Schema<'TerminalOutputChunk'>): Buffer {
  return chunk.encoding === 'base64' ? Buffer.from(chunk.data, 'base64') : Buffer.from(chunk.data, 'utf8');
}

/** How many bytes a chunk holds, without decoding it (where the next chunk's `offset` is). */
export function chunkSize(chunk: Schema<'TerminalOutputChunk'>): number {
  return Buffer.byteLength(chunk.data, chunk.encoding === 'base64' ? 'base64' : 'utf8');
}

/**
 * Cuts `bytes` (what is waiting, the carried start of a character first) into chunks from `offset`;
 * answers them and what must wait for more (nothing when `final`).
 *
 * @example
 * cutChunks(0, new Uint8Array([0x68, 0x69, 0xe2, 0x82]), false); // one chunk "hi", [e2 82] carried
 */
export function cutChunks(
  offset: number,
  bytes: Uint8Array,
  final: boolean,
): { chunks: { chunk: Schema<'TerminalOutputChunk'>; bytes: number }[]; carry: Uint8Array } {
  const tail = final ? 0 : incompleteTail(bytes);
  let rest = bytes.subarray(0, bytes.length - tail);
  const carry = bytes.slice(bytes.length - tail);
  const chunks: { chunk: Schema<'TerminalOutputChunk'>; bytes: number }[] = [];
  let at = offset;
  while (rest.length > 0) {
    let size = Math.min(rest.length, MAX_CHUNK_BYTES);
    if (size < rest.length) size -= incompleteTail(rest.subarray(0, size)) || 0;
    if (size <= 0) size = Math.min(rest.length, MAX_CHUNK_BYTES);
    chunks.push({ chunk: terminalChunk(at, rest.subarray(0, size)), bytes: size });
    at += size;
    rest = rest.subarray(size);
  }
  return { chunks, carry };
}
