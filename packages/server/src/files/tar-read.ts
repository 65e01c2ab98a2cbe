import { FileError } from './driver.js';
import { ENGINE_CHUNK_BYTES } from './tar-entry.js';

const BLOCK = 512;
/** How far a download reads ahead of its client, at most (plus one piece). */
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
 * The body of the first entry of a tar, which must be a regular file (the Engine's archive of one
 * file: maybe pax or GNU long-name headers, then the file), yielded as slices of the source's own
 * chunks (no copy); the rest of the tar is not read. Fails with `unavailable` on a tar that is cut
 * short, malformed, or whose first entry is not a file.
 *
 * @example
 * for await (const piece of firstFileBody(response)) sink.write(piece);
 */
export async function* firstFileBody(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  const chunks = source[Symbol.asyncIterator]();
  let buffered: Buffer = Buffer.alloc(0);
  const fill = async (bytes: number): Promise<void> => {
    while (buffered.length < bytes) {
      const { done, value } = await chunks.next();
      if (done) throw broken('ended before its file');
      const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    }
  };
  let extendedSize: number | undefined;
  for (;;) {
    await fill(BLOCK);
    const header = buffered.subarray(0, BLOCK);
    buffered = buffered.subarray(BLOCK);
    if (!checksumOk(header)) throw broken('has a malformed header');
    const type = String.fromCharCode(header[156] ?? 0);
    const size = numberField(header.subarray(124, 136));
    if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
      // Records about the next entry (pax, GNU long names): small, read whole and skipped.
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      await fill(padded);
      if (type === 'x') extendedSize = paxSize(buffered.subarray(0, size)) ?? extendedSize;
      buffered = buffered.subarray(padded);
      continue;
    }
    if (type !== '0' && type !== '\0' && type !== '7') throw broken('does not start with a file');
    let left = extendedSize ?? size;
    while (left > 0) {
      if (buffered.length === 0) {
        const { done, value } = await chunks.next();
        if (done) throw broken('ended inside its file');
        buffered = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      }
      const piece = buffered.length <= left ? buffered : buffered.subarray(0, left);
      buffered = buffered.subarray(piece.length);
      left -= piece.length;
      yield piece;
    }
    return;
  }
}

/**
 * A web stream of `pieces`, joined to at least {@link ENGINE_CHUNK_BYTES} (fewer, larger writes to
 * the client) and read ahead up to {@link DOWNLOAD_BUFFER_BYTES}; `close` runs once, when it ends,
 * fails or is cancelled.
 *
 * @example
 * const body = joinedStream(firstFileBody(response), () => response.destroy());
 */
export function joinedStream(pieces: AsyncGenerator<Buffer>, close: () => void): ReadableStream<Uint8Array> {
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    close();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const batch: Buffer[] = [];
          let bytes = 0;
          let ended = false;
          while (!ended && bytes < ENGINE_CHUNK_BYTES) {
            const { done, value } = await pieces.next();
            if (done) ended = true;
            else {
              batch.push(value);
              bytes += value.length;
            }
          }
          if (bytes > 0)
            controller.enqueue(batch.length === 1 ? (batch[0] as Buffer) : Buffer.concat(batch, bytes));
          if (ended) {
            finish();
            controller.close();
          }
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      async cancel() {
        finish();
        await pieces.return(undefined).catch(() => {});
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: DOWNLOAD_BUFFER_BYTES }),
  );
}
