import { Readable } from 'node:stream';
import { FileError } from './driver.js';
import { counted } from './streams.js';

/** One entry of a tar made here: a directory, or a file whose body follows its header. */
export interface TarEntryHeader {
  /** Relative name (`a/b/c`), without a trailing slash. */
  name: string;
  type: 'file' | 'directory';
  /** Body bytes (0 for a directory). */
  size: number;
  mode: number;
  mtime: Date;
  uid: number;
  gid: number;
}

const BLOCK = 512;
/** The bytes handed to the Engine at once, at least (the last piece may be shorter). */
export const ENGINE_CHUNK_BYTES = 256 * 1024;
/** How far a one-file tar reads its body ahead of the Engine. */
export const ENGINE_BUFFER_BYTES = 4 * 1024 * 1024;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** The pax record `LEN key=value\n`, whose length counts itself. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  const bytes = Buffer.byteLength(body);
  let length = bytes + String(bytes).length;
  if (String(length).length !== String(bytes).length) length = bytes + String(length).length;
  return Buffer.from(`${length}${body}`);
}

/** A 512-byte ustar header; `name` must already fit (ASCII, at most 100 bytes). */
function ustar(name: string, prefix: string, typeflag: string, header: TarEntryHeader, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(header.mode & 0o7777, 8), 100, 'ascii');
  block.write(octal(header.uid, 8), 108, 'ascii');
  block.write(octal(header.gid, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(Math.floor(header.mtime.getTime() / 1000), 12), 136, 'ascii');
  block.write('        ', 148, 'ascii'); // the checksum counts its own field as spaces
  block.write(typeflag, 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** Splits a name into ustar's `prefix/name` (≤155 and ≤100 bytes, ASCII); undefined when it cannot. */
function ustarName(full: string): { prefix: string; name: string } | undefined {
  if (!/^[\x20-\x7e]*$/.test(full)) return undefined;
  if (full.length <= 100) return { prefix: '', name: full };
  for (let at = full.indexOf('/'); at !== -1; at = full.indexOf('/', at + 1)) {
    const prefix = full.slice(0, at);
    const name = full.slice(at + 1);
    if (prefix.length <= 155 && name.length <= 100 && name !== '') return { prefix, name };
  }
  return undefined;
}

/**
 * The header blocks of one entry: a ustar header, preceded by a pax header carrying the path when
 * it does not fit ustar (longer than 255 bytes, or not ASCII). Sizes above 8 GiB are not supported.
 *
 * @example
 * tarHeader({ name: 'svc/a.txt', type: 'file', size: 5, mode: 0o644, mtime: new Date(), uid: 1000, gid: 1000 });
 */
export function tarHeader(header: TarEntryHeader): Buffer {
  if (header.size >= 8 ** 11) throw new RangeError('a tar entry of 8 GiB or more needs a pax size');
  const full = header.type === 'directory' ? `${header.name}/` : header.name;
  const typeflag = header.type === 'directory' ? '5' : '0';
  const fits = ustarName(full);
  if (fits) return ustar(fits.name, fits.prefix, typeflag, header, header.size);
  const pax = paxRecord('path', full);
  const paxHeader = ustar('PaxHeader', '', 'x', header, pax.length);
  const short = Buffer.from(full)
    .subarray(0, 100)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '_');
  return Buffer.concat([
    paxHeader,
    pax,
    padding(pax.length),
    ustar(short, '', typeflag, header, header.size),
  ]);
}

/** The zeros that fill a body of `size` bytes up to its 512-byte block. */
export function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The two zero blocks that end a tar. */
export const END_OF_TAR = Buffer.alloc(2 * BLOCK);

/**
 * A one-file tar as a Node stream for the Engine's `PUT …/archive`: the directories' headers, the
 * file's header, its body as `source` streams (counted: past `maxBytes` `too_large`; longer or
 * shorter than `file.size` fails the stream), its padding and the end. The body's pieces are joined
 * to at least {@link ENGINE_CHUNK_BYTES} before they go on, and the stream reads ahead of the Engine
 * up to {@link ENGINE_BUFFER_BYTES} (plus one piece): few, large writes, never the whole body. The stream fails with the
 * body's error; `failure()` names it (the Engine's own error then says less).
 *
 * @example
 * const tar = oneFileTar([], header, body, { maxBytes, signal });
 * await container.putArchive(tar.stream, { path: dir });
 */
export function oneFileTar(
  directories: TarEntryHeader[],
  file: TarEntryHeader,
  source: AsyncIterable<Uint8Array>,
  options: { maxBytes: number; signal: AbortSignal },
): { stream: Readable; failure(): unknown } {
  const size = file.size;
  const iterator = counted(source, options)[Symbol.asyncIterator]();
  let failed: unknown;
  let total = 0;
  let ended = false;
  let wanted: (() => void) | undefined;
  const stream = new Readable({
    highWaterMark: ENGINE_BUFFER_BYTES,
    read() {
      const resume = wanted;
      wanted = undefined;
      resume?.();
    },
    destroy(error, callback) {
      if (!ended) void iterator.return(undefined).catch(() => {});
      wanted?.();
      callback(error);
    },
  });
  // Reads the body ahead of the Engine, up to the stream's high-water mark, so that both sockets
  // stay busy; pieces are joined to ENGINE_CHUNK_BYTES.
  async function pump(): Promise<void> {
    const pieces: Uint8Array[] = [...directories.map(tarHeader), tarHeader(file)];
    for (;;) {
      let bytes = 0;
      while (bytes < ENGINE_CHUNK_BYTES && total < size) {
        const { done, value } = await iterator.next();
        if (done) throw new FileError('unavailable', 'the body is shorter than its declared size', { size });
        total += value.length;
        if (total > size)
          throw new FileError('too_large', 'the body is longer than its declared size', { size });
        pieces.push(value);
        bytes += value.length;
      }
      if (total === size) {
        const { done } = await iterator.next();
        if (!done) throw new FileError('too_large', 'the body is longer than its declared size', { size });
        ended = true;
        pieces.push(padding(size), END_OF_TAR);
      }
      if (stream.destroyed) return;
      const more = stream.push(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces));
      pieces.length = 0;
      if (ended) {
        stream.push(null);
        return;
      }
      if (!more) await new Promise<void>((resolve) => (wanted = resolve));
      if (stream.destroyed) return;
    }
  }
  pump().catch((error: unknown) => {
    failed ??= error;
    stream.destroy(error as Error);
  });
  return { stream, failure: () => failed };
}
