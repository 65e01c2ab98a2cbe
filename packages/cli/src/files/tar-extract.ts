import { constants } from 'node:fs';
import { chmod, link, lstat, mkdir, open, rm, symlink } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { CliError } from '../exit-codes.js';

/** What an extraction wrote. */
export interface ExtractSummary {
  entries: number;
  /** Bytes of regular files. */
  bytes: number;
}

function refuse(rule: string, entry: string, message: string): CliError {
  return new CliError(
    'error',
    'bad_archive',
    `Not extracted: the entry "${entry}" ${message} (rule ${rule}).`,
  );
}

/** The entry's name as segments, or a refusal: an absolute name or a `..` segment is never written. */
function segmentsOf(name: string): string[] {
  if (name.startsWith('/')) throw refuse('absolute', name, 'has an absolute name');
  const segments = name.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw refuse('dot_dot', name, 'has a ".." segment');
  return segments;
}

async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Extracts a tar archive into the local directory `root` (created when missing), streamed, with the
 * rules the server holds an uploaded archive to: no absolute names and no `..` segments; no devices or
 * FIFOs; hard links only to a file extracted earlier from the same archive; nothing written under a
 * symlink (one of the archive's, or one already on disk inside `root`); symlinks only relative and
 * never climbing above `root`; no other entry types. A refused entry stops the extraction with
 * `bad_archive` (entries before it stay written). Files are written without following a symlink at
 * their own name, with permission bits only. `strip`: leave out the first segment of each name (the
 * remote directory's own name, when `root` is the copy of it).
 *
 * @example
 * const { body } = await downloadArchive(client, 'dev', 'box', '/home/svc/src');
 * await extractArchive(body, './src', { strip: 1 });
 */
export async function extractArchive(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  root: string,
  options: { strip?: number; onBytes?: (bytes: number) => void } = {},
): Promise<ExtractSummary> {
  await mkdir(root, { recursive: true });
  const files = new Set<string>();
  const symlinks = new Set<string>();
  const summary: ExtractSummary = { entries: 0, bytes: 0 };
  const counter = { read: 0 };
  const extract = tar.extract();
  const source = body instanceof ReadableStream ? Readable.fromWeb(body as never) : Readable.from(body);
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, entry, next) => {
      writeEntry({
        header,
        entry,
        root,
        strip: options.strip ?? 0,
        files,
        symlinks,
        summary,
        counter,
        onBytes: options.onBytes,
      }).then(
        () => next(),
        (error: unknown) => {
          entry.resume();
          reject(error);
          source.destroy();
          extract.destroy();
        },
      );
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
    source.on('error', reject);
  });
  source.pipe(extract as unknown as NodeJS.WritableStream);
  await done;
  return summary;
}

interface EntryWrite {
  header: tar.Headers;
  entry: Readable;
  root: string;
  strip: number;
  files: Set<string>;
  symlinks: Set<string>;
  summary: ExtractSummary;
  counter: { read: number };
  onBytes: ((bytes: number) => void) | undefined;
}

/** Writes one entry of {@link extractArchive}, or throws its refusal. */
async function writeEntry(w: EntryWrite): Promise<void> {
  const { header, entry, root, files, symlinks, summary } = w;
  const name = header.name;
  const segments = segmentsOf(name).slice(w.strip);
  if (segments.length === 0) {
    entry.resume();
    return;
  }
  const clean = segments.join('/');
  for (let at = 1; at < segments.length; at++) {
    const prefix = segments.slice(0, at).join('/');
    if (symlinks.has(prefix)) throw refuse('under_symlink', name, 'is under a symlink of the archive');
    if (await isSymlink(join(root, prefix)))
      throw refuse('under_symlink', name, 'is under a symlink on disk');
  }
  const target = join(root, ...segments);
  const mode = (header.mode ?? 0o644) & 0o777;
  switch (header.type) {
    case 'directory':
      await mkdir(target, { recursive: true });
      await chmod(target, mode | 0o700);
      entry.resume();
      break;
    case 'file':
    case 'contiguous-file': {
      await mkdir(dirname(target), { recursive: true });
      if (await isSymlink(target)) await rm(target);
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
      const handle = await open(target, flags, mode);
      try {
        for await (const chunk of entry as AsyncIterable<Buffer>) {
          await handle.write(chunk);
          w.counter.read += chunk.length;
          w.onBytes?.(w.counter.read);
        }
      } finally {
        await handle.close();
      }
      await chmod(target, mode);
      files.add(clean);
      summary.bytes += header.size ?? 0;
      break;
    }
    case 'symlink': {
      const to = header.linkname ?? '';
      const resolved = posix.normalize(posix.join(posix.dirname(clean), to));
      if (to.startsWith('/') || resolved === '..' || resolved.startsWith('../'))
        throw refuse('symlink_escape', name, `links to "${to}", outside the directory`);
      await mkdir(dirname(target), { recursive: true });
      await rm(target, { force: true });
      await symlink(to, target);
      symlinks.add(clean);
      entry.resume();
      break;
    }
    case 'link': {
      const to = segmentsOf(header.linkname ?? '')
        .slice(w.strip)
        .join('/');
      if (!files.has(to)) throw refuse('hard_link', name, 'is a hard link to no earlier file of the archive');
      await rm(target, { force: true });
      await link(join(root, to), target);
      files.add(clean);
      entry.resume();
      break;
    }
    case 'character-device':
    case 'block-device':
    case 'fifo':
      throw refuse('special_file', name, 'is a device or a FIFO');
    default:
      throw refuse('entry_type', name, `is of a type that is not extracted (${String(header.type)})`);
  }
  summary.entries++;
}
