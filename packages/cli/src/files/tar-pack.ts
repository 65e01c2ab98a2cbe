import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';

/** What packing left out: sockets, FIFOs and devices, which an archive for a computer may not hold. */
export interface PackReport {
  skipped: string[];
}

/**
 * A local directory as an uncompressed tar archive (POSIX ustar with PAX headers, what the API's
 * `application/x-tar` takes), streamed: entries are read and packed as the archive is consumed, one
 * file open at a time, in name order. Names are relative to `root` (`a.txt`, `lib/`, `lib/b.js`),
 * below `prefix` when given (`src/a.txt`); symlinks are packed as links, never followed; sockets,
 * FIFOs and devices are left out and listed in `report.skipped`.
 *
 * @example
 * const { tar } = packDirectory('./src');
 * await uploadArchive(client, 'dev', 'box', '/home/svc/src', tar, { parents: true });
 */
export function packDirectory(
  root: string,
  prefix = '',
): { tar: AsyncIterable<Uint8Array>; report: PackReport } {
  const pack = tar.pack();
  const report: PackReport = { skipped: [] };
  const walk = async (dir: string, name: string): Promise<void> => {
    const entries = (await readdir(dir)).sort();
    for (const entry of entries) {
      const path = join(dir, entry);
      const entryName = `${name}${entry}`;
      const stats = await lstat(path);
      const common = { mode: stats.mode & 0o7777, mtime: stats.mtime };
      if (stats.isDirectory()) {
        pack.entry({ ...common, name: `${entryName}/`, type: 'directory' });
        await walk(path, `${entryName}/`);
      } else if (stats.isSymbolicLink()) {
        pack.entry({ ...common, name: entryName, type: 'symlink', linkname: await readlink(path) });
      } else if (stats.isFile()) {
        const sink = pack.entry({ ...common, name: entryName, type: 'file', size: stats.size });
        await pipeline(createReadStream(path), sink);
      } else report.skipped.push(entryName);
    }
  };
  walk(root, prefix ? `${prefix.replace(/\/+$/, '')}/` : '').then(
    () => pack.finalize(),
    (error: Error) => pack.destroy(error),
  );
  return { tar: pack as unknown as AsyncIterable<Uint8Array>, report };
}
