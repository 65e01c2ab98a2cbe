// A small POSIX ustar writer and lister for the archive tests: the suite makes the archives it uploads
// and reads the names back from the ones it downloads, byte by byte, with no tar library in between.

/** One entry of an archive: a directory (name ends in `/`) or a regular file with its bytes. */
export interface TarEntry {
  name: string;
  content?: Uint8Array;
}

function header(name: string, size: number, directory: boolean): Buffer {
  const block = Buffer.alloc(512);
  const put = (text: string, at: number, length: number) => block.write(text, at, length, 'ascii');
  const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, '0')}\0`;
  put(name, 0, 100);
  put(octal(directory ? 0o755 : 0o644, 8), 100, 8);
  put(octal(1000, 8), 108, 8);
  put(octal(1000, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(1794312005, 12), 136, 12);
  put('        ', 148, 8);
  put(directory ? '5' : '0', 156, 1);
  put('ustar\x0000', 257, 8);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return block;
}

/** An uncompressed ustar archive of `entries`, in order, with its two zero blocks at the end. */
export function makeTar(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const { name, content } of entries) {
    const bytes = Buffer.from(content ?? new Uint8Array());
    parts.push(header(name, bytes.length, name.endsWith('/')));
    parts.push(bytes, Buffer.alloc((512 - (bytes.length % 512)) % 512));
  }
  return Buffer.concat([...parts, Buffer.alloc(1024)]);
}

/** The entries of an uncompressed tar archive (ustar; PAX extended headers skipped), with file bytes. */
export function readTar(archive: Uint8Array): TarEntry[] {
  const data = Buffer.from(archive);
  const entries: TarEntry[] = [];
  let at = 0;
  let longName: string | undefined;
  while (at + 512 <= data.length) {
    const block = data.subarray(at, at + 512);
    if (block.every((byte) => byte === 0)) break;
    const field = (from: number, length: number) =>
      block
        .subarray(from, from + length)
        .toString('latin1')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const prefix = field(345, 155);
    const content = data.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      // A PAX header: its `path` record names the next entry.
      longName = /\d+ path=([^\n]*)\n/.exec(content.toString('utf8'))?.[1];
      continue;
    }
    if (type === 'g') continue;
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    entries.push(type === '5' ? { name } : { name, content: new Uint8Array(content) });
  }
  return entries;
}
