import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { FileStat } from './driver.js';
import { baseName } from './paths.js';

/** A stat from a listing's tar header; a hard link's size is -1 (unknown: its header has none). */
export function headerStat(path: string, header: tar.Headers): FileStat {
  const base = {
    path,
    name: baseName(path),
    mode: (header.mode ?? 0) & 0o777,
    modifiedAt: header.mtime ?? new Date(0),
  };
  switch (header.type) {
    case 'file':
    case 'contiguous-file':
      return { ...base, type: 'file', size: header.size ?? 0 };
    case 'link':
      return { ...base, type: 'file', size: -1 };
    case 'directory':
      return { ...base, type: 'directory', size: 0 };
    case 'symlink':
      return {
        ...base,
        type: 'symlink',
        size: Buffer.byteLength(header.linkname ?? ''),
        linkTarget: header.linkname ?? '',
      };
    default:
      return { ...base, type: 'other', size: 0 };
  }
}

/** The Engine's tar with the first segment of every name `from` renamed `to`, streamed. */
export function renameTop(source: IncomingMessage, from: string, to: string): Readable {
  const extract = tar.extract();
  const pack = tar.pack();
  pack.on('error', () => {}); // its reader (the download) reports it
  extract.on('error', () => {}); // reported through the loop below and `pack`
  source.pipe(extract as unknown as NodeJS.WritableStream);
  source.once('error', (error) => extract.destroy(error));
  (async () => {
    for await (const entry of extract) {
      // Without the Engine's pax records: their `path` would name the entry again, unrenamed (pack
      // writes new ones for names that need them).
      const { pax: _pax, ...header } = entry.header as tar.Headers & { pax?: unknown };
      // The Engine names the entries of `/` itself `/`, `/bin/`…: made relative (`./bin/`).
      const rename = (name: string) =>
        from === '/'
          ? name.startsWith('/')
            ? to + name
            : name
          : name === from || name.startsWith(`${from}/`)
            ? to + name.slice(from.length)
            : name;
      header.name = rename(header.name);
      // A hard link names an earlier entry of the same archive: renamed alike.
      if (header.type === 'link' && header.linkname) header.linkname = rename(header.linkname);
      const done = new Promise<void>((resolve, reject) => {
        const sink = pack.entry(header, (error) => (error ? reject(error) : resolve()));
        sink.on('error', () => {}); // reported through the entry's callback
        if (header.type === 'file' || header.type === 'contiguous-file') {
          (async () => {
            for await (const chunk of entry)
              if (!sink.write(chunk)) await new Promise((r) => sink.once('drain', r));
            sink.end();
          })().catch(reject);
        } else entry.resume();
      });
      await done;
    }
    pack.finalize();
  })().catch((error: unknown) => {
    source.destroy();
    pack.destroy(error as Error);
  });
  return Readable.from(pack);
}
