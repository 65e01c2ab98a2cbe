import type { Readable } from 'node:stream';
import { FileError } from './driver.js';
import { fileBytesMoved } from './heap.js';

const BLOCK = 512;
/** How far a download reads ahead of its client, at most (plus one chunk of the Engine's). */
export const DOWNLOAD_BUFFER_BYTES = 1024 * 1024;

function broken(message: string): FileError {
  return new FileError('unavailable', `the Engine's archive ${message}`, {});
}

/** A header's numeric field: octal text, or base-256 when its first byte has the high bit. */
function numberField(field: Buffer): number {
  if ((field[0] ?? 0) & 0x80) {
    let value = (field[0] ?? 0) & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const text = field.toString('latin1').replace(/\0.*$/s, '').trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

function checksumOk(header: Buffer): boolean {
  let sum = 0;
  for (let at = 0; at < BLOCK; at++) sum += at >= 148 && at < 156 ? 32 : (header[at] ?? 0);
  return sum === numberField(header.subarray(148, 156));
}

/** The `size` record of a pax header, when it has one. */
function paxSize(records: Buffer): number | undefined {
  let size: number | undefined;
  for (const line of records.toString('utf8').split('\n')) {
    const match = /^\d+ size=(\d+)$/.exec(line);
    if (match) size = Number(match[1]);
  }
  return size;
}

/**
 * A web stream of the body of the first entry of a tar, which must be a regular file (the Engine's
 * archive of one file: maybe pax or GNU long-name headers, then the file), read from `source`'s
 * `data` events: the headers are parsed as they arrive, then the body goes on as slices of the
 * source's own chunks (no copy, no join, one step per chunk), read ahead of the client up to
 * {@link DOWNLOAD_BUFFER_BYTES}; the rest of the tar is not read. Fails with `unavailable` on a tar
 * that is cut short, malformed, or whose first entry is not a file. `close` runs once, when the body
 * ends, fails or is cancelled (the caller drops the Engine's connection there).
 *
 * @example
 * const body = firstFileStream(response, () => response.destroy());
 */
export function firstFileStream(source: Readable, close: () => void): ReadableStream<Uint8Array> {
  /** Header bytes not parsed yet; undefined once the file's body has begun. */
  let head: Buffer | undefined = Buffer.alloc(0);
  let extendedSize: number | undefined;
  let left = 0;
  let finished = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const finish = (error?: unknown) => {
    if (finished) return;
    finished = true;
    source.off('data', onData);
    source.off('end', onEnd);
    source.off('close', onEnd);
    source.off('error', finish);
    close();
    if (error === undefined) controller.close();
    else controller.error(error);
  };
  /** Parses the headers in `head`; answers the bytes after the file's header, or undefined for more. */
  const headers = (bytes: Buffer): Buffer | undefined => {
    for (;;) {
      if (bytes.length < BLOCK) {
        head = bytes;
        return undefined;
      }
      const header = bytes.subarray(0, BLOCK);
      if (!checksumOk(header)) throw broken('has a malformed header');
      const type = String.fromCharCode(header[156] ?? 0);
      const size = numberField(header.subarray(124, 136));
      if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
        // Records about the next entry (pax, GNU long names): small, read whole and skipped.
        const padded = Math.ceil(size / BLOCK) * BLOCK;
        if (bytes.length < BLOCK + padded) {
          head = bytes;
          return undefined;
        }
        if (type === 'x') extendedSize = paxSize(bytes.subarray(BLOCK, BLOCK + size)) ?? extendedSize;
        bytes = bytes.subarray(BLOCK + padded);
        continue;
      }
      if (type !== '0' && type !== '\0' && type !== '7') throw broken('does not start with a file');
      left = extendedSize ?? size;
      head = undefined;
      return bytes.subarray(BLOCK);
    }
  };
  function onData(chunk: Buffer): void {
    if (finished) return;
    fileBytesMoved(chunk.length);
    try {
      let body: Buffer | undefined = chunk;
      if (head !== undefined) body = headers(head.length === 0 ? chunk : Buffer.concat([head, chunk]));
      if (body === undefined) return;
      const piece = body.length <= left ? body : body.subarray(0, left);
      left -= piece.length;
      if (piece.length > 0) controller.enqueue(piece);
      if (left === 0) finish();
      else if ((controller.desiredSize ?? 0) <= 0) source.pause();
    } catch (error) {
      finish(error);
    }
  }
  function onEnd(): void {
    finish(broken(head === undefined ? 'ended inside its file' : 'ended before its file'));
  }
  return new ReadableStream<Uint8Array>(
    {
      start(made) {
        controller = made;
        source.on('data', onData);
        source.once('end', onEnd);
        source.once('close', onEnd);
        source.once('error', finish);
      },
      pull() {
        if (!finished) source.resume();
      },
      cancel() {
        if (finished) return;
        finished = true;
        source.off('data', onData);
        close();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: DOWNLOAD_BUFFER_BYTES }),
  );
}
