import { Readable } from 'node:stream';
import { nodeBackedStream } from '../node-bytes.js';
import { FileError } from './driver.js';

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
 * archive of one file: maybe pax or GNU long-name headers, then the file): a {@link nodeBackedStream}
 * over {@link FirstFileReadable}, so that a Node consumer (the adapter writing the download) takes the
 * Node stream and the bytes never enter a web stream. Nothing of `source` is read before the first
 * read; `close` runs once, when the body ends, fails or is cancelled (the caller drops the Engine's
 * connection there).
 *
 * @example
 * const body = firstFileStream(response, () => response.destroy());
 */
export function firstFileStream(source: Readable, close: () => void): ReadableStream<Uint8Array> {
  return nodeBackedStream(() => new FirstFileReadable(source, close));
}

/**
 * The body of the first entry of a tar (see {@link firstFileStream}) as a Node stream, read from
 * `source`'s `data` events: the headers are parsed as they arrive, then the body goes on as slices
 * of the source's own chunks (no copy, no join, one step per chunk), read ahead of its reader up to
 * {@link DOWNLOAD_BUFFER_BYTES}; the rest of the tar is not read. Fails with `unavailable` on a tar
 * that is cut short, malformed, or whose first entry is not a file. `close` runs once, when the body
 * ends, fails or the stream is destroyed.
 *
 * @example
 * await pipeline(new FirstFileReadable(response, () => response.destroy()), response_);
 */
export class FirstFileReadable extends Readable {
  readonly #source: Readable;
  readonly #close: () => void;
  /** Header bytes not parsed yet; undefined once the file's body has begun. */
  #head: Buffer | undefined = Buffer.alloc(0);
  #extendedSize: number | undefined;
  #left = 0;
  #finished = false;
  #listening = false;

  constructor(source: Readable, close: () => void) {
    super({ highWaterMark: DOWNLOAD_BUFFER_BYTES });
    this.#source = source;
    this.#close = close;
  }

  override _read(): void {
    if (this.#finished) return;
    if (!this.#listening) {
      this.#listening = true;
      this.#source.on('data', this.#onData);
      this.#source.once('end', this.#onEnd);
      this.#source.once('close', this.#onEnd);
      this.#source.once('error', this.#onError);
    }
    this.#source.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#finish();
    callback(error);
  }

  /** Stops listening and closes the source; true the first time. */
  #finish(): boolean {
    if (this.#finished) return false;
    this.#finished = true;
    this.#source.off('data', this.#onData);
    this.#source.off('end', this.#onEnd);
    this.#source.off('close', this.#onEnd);
    this.#source.off('error', this.#onError);
    this.#close();
    return true;
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#finished) return;
    try {
      let body: Buffer | undefined = chunk;
      if (this.#head !== undefined)
        body = this.#headers(this.#head.length === 0 ? chunk : Buffer.concat([this.#head, chunk]));
      if (body === undefined) return;
      const piece = body.length <= this.#left ? body : body.subarray(0, this.#left);
      this.#left -= piece.length;
      const more = piece.length > 0 ? this.push(piece) : true;
      if (this.#left === 0) {
        if (this.#finish()) this.push(null);
      } else if (!more) this.#source.pause();
    } catch (error) {
      this.destroy(error as Error);
    }
  };

  readonly #onEnd = (): void => {
    if (this.#finished) return;
    this.destroy(broken(this.#head === undefined ? 'ended inside its file' : 'ended before its file'));
  };

  readonly #onError = (error: Error): void => {
    this.destroy(error);
  };

  /** Parses the headers in `bytes`; answers the bytes after the file's header, or undefined for more. */
  #headers(bytes: Buffer): Buffer | undefined {
    for (;;) {
      if (bytes.length < BLOCK) {
        this.#head = bytes;
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
          this.#head = bytes;
          return undefined;
        }
        if (type === 'x')
          this.#extendedSize = paxSize(bytes.subarray(BLOCK, BLOCK + size)) ?? this.#extendedSize;
        bytes = bytes.subarray(BLOCK + padded);
        continue;
      }
      if (type !== '0' && type !== '\0' && type !== '7') throw broken('does not start with a file');
      this.#left = this.#extendedSize ?? size;
      this.#head = undefined;
      return bytes.subarray(BLOCK);
    }
  }
}
