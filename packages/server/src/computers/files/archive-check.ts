import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { FileError, quotaExceeded, tooLarge } from './driver.js';
import { fileBytesMoved } from './heap.js';
import { abortReason } from './streams.js';

/** The rules `checkArchive` enforces, as reported in `details.rule` of a `bad_archive` failure. */
export type ArchiveRule =
  | 'compressed'
  | 'absolute'
  | 'dot_dot'
  | 'special_file'
  | 'hard_link'
  | 'under_symlink'
  | 'symlink_escape'
  | 'sparse'
  | 'unsupported_type'
  | 'too_many_entries'
  | 'size_mismatch'
  | 'malformed';

export interface ArchiveCheckOptions {
  /** Most entries the archive may hold (`too_many_entries` past it). */
  maxEntries: number;
  /** The per-request byte limit: over it (raw bytes, or the entries' declared sizes) fails `too_large`. */
  maxBytes: number;
  /** Bytes the computer's quota has left, and its limit: file bytes past them fail `quota_exceeded`. */
  quota?: { left: number; limit: number };
  /** The owner every entry is given: the computer's user, so its processes can change what was uploaded. */
  uid: number;
  gid: number;
  signal: AbortSignal;
  /**
   * The name each regular file is written under instead of its own (a temporary name beside it), so
   * that the caller can rename the files into place once the whole archive is in: a destination that
   * extracts as it reads (the Engine's) would otherwise keep the entry a cut-off upload was writing,
   * truncated. Hard links to a staged file name its staged name. Absent: every entry keeps its name.
   */
  stage?: (name: string) => string;
}

/** What a checked archive held once it is all read. */
export interface ArchiveSummary {
  entries: number;
  /** Bytes of regular files. */
  bytes: number;
}

/** The magic bytes of the compressions an archive must not use (gzip, compress, bzip2, xz, zstd, lz4). */
const COMPRESSED: readonly (readonly number[])[] = [
  [0x1f, 0x8b],
  [0x1f, 0x9d],
  [0x42, 0x5a, 0x68],
  [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00],
  [0x28, 0xb5, 0x2f, 0xfd],
  [0x04, 0x22, 0x4d, 0x18],
];
const MAGIC_BYTES = 6;

function bad(rule: ArchiveRule, entry: string | undefined, message: string): FileError {
  return new FileError('bad_archive', message, entry === undefined ? { rule } : { rule, entry });
}

/**
 * The segments of an entry's name, or a `bad_archive` failure: absolute names and `..` segments are
 * refused; `.` and empty segments dropped (`./a//b/` is `a/b`).
 */
function entrySegments(name: string): string[] {
  if (name.startsWith('/')) throw bad('absolute', name, `the entry "${name}" has an absolute name`);
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw bad('dot_dot', name, `the entry "${name}" has a ".." segment`);
  return segments;
}

/**
 * Checks an uploaded tar as it streams and re-emits it clean: the returned `tar` is a new archive of
 * the same entries, each under its normalized name, owned by `uid:gid`, with permission bits only
 * (parents that have no entry of their own get one: 0755, owned alike, made before their first child;
 * like any directory entry, it replaces a symlink of that name in the destination). The
 * archive fails with a `FileError` — `bad_archive` with `details.rule` (see {@link ArchiveRule}) and
 * `details.entry`, or `too_large`, or `quota_exceeded` — on the first entry that breaks a rule, before
 * that entry is emitted:
 * compressed input (rule `compressed`); absolute names; `..` segments; devices and FIFOs; hard links
 * whose target is not an earlier file of the same archive; an entry under a symlink made earlier in the
 * archive; a relative symlink that climbs above the archive's root (the Engine refuses those too);
 * GNU sparse files and unknown types; more than `maxEntries` entries; declared or counted sizes over
 * `maxBytes` or the quota; a body whose length differs from its header's. Bodies are counted, never
 * trusted, and never held whole: one chunk at a time goes through.
 *
 * @example
 * const checked = checkArchive(nodeReadable(body), { maxEntries: 10_000, maxBytes, uid: 1000, gid: 1000, signal });
 * await docker.getContainer(id).putArchive(checked.tar, { path: '/home/svc' });
 * const { entries, bytes } = await checked.done;
 * // with `stage`: checked.staged lists each file's [staged name, name] as it is reached
 */
export function checkArchive(
  input: AsyncIterable<Uint8Array> & { destroy?(): void },
  options: ArchiveCheckOptions,
): { tar: Readable; done: Promise<ArchiveSummary>; staged: [string, string][] } {
  const extract = tar.extract();
  const pack = tar.pack();
  // Their failures reach the caller through `done` and through the reader of `tar`; as events they
  // would be uncaught once nobody listens.
  extract.on('error', () => {});
  pack.on('error', () => {});
  const { signal } = options;
  let failure: unknown;
  const fail = (error: unknown) => {
    failure ??= error;
    extract.destroy(failure as Error);
    pack.destroy(failure as Error);
    input.destroy?.(); // without the error: nobody may be listening to the input any more
  };
  const onAbort = () => fail(abortReason(signal));
  signal.addEventListener('abort', onAbort, { once: true });

  const feed = (async () => {
    let raw = 0;
    let head: Buffer | undefined = Buffer.alloc(0);
    for await (const chunk of input) {
      if (failure) return;
      raw += chunk.length;
      fileBytesMoved(chunk.length);
      if (raw > options.maxBytes) throw tooLarge(options.maxBytes);
      let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      if (head) {
        head = Buffer.concat([head, bytes]);
        if (head.length < MAGIC_BYTES) continue;
        checkMagic(head);
        bytes = head;
        head = undefined;
      }
      if (!extract.write(bytes)) await new Promise((resolve) => extract.once('drain', resolve));
    }
    if (head) {
      checkMagic(head);
      extract.write(head);
    }
    extract.end();
  })();
  feed.catch(fail);

  const summary: ArchiveSummary = { entries: 0, bytes: 0 };
  // With `stage`: each staged file's `[staged, name]`, in the archive's order (relative names).
  const staged: [string, string][] = [];
  // The staged name of each file written so far (for the hard links that name it).
  const stagedAs = new Map<string, string>();
  const consume = (async () => {
    const files = new Set<string>();
    const symlinks = new Set<string>();
    const dirs = new Set<string>();
    let declared = 0;
    try {
      for await (const entry of extract) {
        const { header } = entry;
        const name = header.name;
        const segments = entrySegments(name);
        const clean = segments.join('/');
        for (let at = 1; at < segments.length; at++)
          if (symlinks.has(segments.slice(0, at).join('/')))
            throw bad('under_symlink', name, `the entry "${name}" is under a symlink of the archive`);
        const pax = (header as { pax?: Record<string, string> | null }).pax;
        if (pax && Object.keys(pax).some((key) => key.startsWith('GNU.sparse')))
          throw bad('sparse', name, `the entry "${name}" is a sparse file`);
        if (++summary.entries > options.maxEntries)
          throw bad(
            'too_many_entries',
            undefined,
            `the archive holds more than ${options.maxEntries} entries`,
          );
        const type = header.type;
        const out: tar.Headers = {
          name: clean,
          mode: (header.mode ?? (type === 'directory' ? 0o755 : 0o644)) & 0o777,
          mtime: header.mtime ?? new Date(),
          uid: options.uid,
          gid: options.gid,
        };
        switch (type) {
          case 'file':
          case 'contiguous-file':
            out.type = 'file';
            out.size = header.size ?? 0;
            declared += out.size;
            if (declared > options.maxBytes) throw tooLarge(options.maxBytes);
            if (options.quota && declared > options.quota.left) throw quotaExceeded(options.quota.limit);
            break;
          case 'directory':
            out.type = 'directory';
            break;
          case 'symlink': {
            const target = header.linkname ?? '';
            if (!target.startsWith('/') && climbsAbove(segments.slice(0, -1), target))
              throw bad('symlink_escape', name, `the symlink "${name}" leads above the archive's root`);
            out.type = 'symlink';
            out.linkname = target;
            break;
          }
          case 'link': {
            const target = header.linkname ?? '';
            const targetClean = target.startsWith('/') ? undefined : safeSegments(target)?.join('/');
            if (targetClean === undefined || !files.has(targetClean))
              throw bad(
                'hard_link',
                name,
                `the hard link "${name}" does not lead to an earlier file of the archive`,
              );
            out.type = 'link';
            out.linkname = stagedAs.get(targetClean) ?? targetClean;
            break;
          }
          case 'character-device':
          case 'block-device':
          case 'fifo':
            throw bad('special_file', name, `the entry "${name}" is a device or FIFO`);
          default:
            throw bad(
              'unsupported_type',
              name,
              `the entry "${name}" has a type this service does not extract`,
            );
        }
        if (clean === '') {
          // The archive's own root (`./`): the destination directory itself, which exists.
          summary.entries--;
          entry.resume();
          await new Promise((resolve) => entry.once('end', resolve));
          continue;
        }
        // Parents the archive implies without entries of their own: made here, owned by the computer's
        // user (the Engine would make them root's, which the computer's user could not change).
        for (let at = 1; at < segments.length; at++) {
          const parent = segments.slice(0, at).join('/');
          if (dirs.has(parent)) continue;
          dirs.add(parent);
          files.delete(parent);
          await copyEntry(
            entry,
            {
              name: parent,
              type: 'directory',
              mode: 0o755,
              mtime: new Date(),
              uid: options.uid,
              gid: options.gid,
            },
            pack,
            undefined,
          );
        }
        if (out.type === 'symlink') symlinks.add(clean);
        if (out.type === 'directory') dirs.add(clean);
        else dirs.delete(clean);
        if (out.type === 'file' || out.type === 'link') files.add(clean);
        else files.delete(clean);
        stagedAs.delete(clean);
        if (out.type === 'file' && options.stage) {
          out.name = options.stage(clean);
          stagedAs.set(clean, out.name);
          staged.push([out.name, clean]);
        }
        await copyEntry(entry, out, pack, summary, clean);
      }
      pack.finalize();
    } catch (error) {
      fail(error instanceof FileError || signal.aborted ? error : malformed(error));
      throw failure;
    }
  })();

  const done = Promise.all([feed, consume])
    .then(() => {
      if (failure) throw failure;
      return summary;
    })
    .catch((error: unknown) => {
      throw failure ?? error;
    })
    .finally(() => signal.removeEventListener('abort', onAbort));
  done.catch(() => {});
  return { tar: Readable.from(pack, { objectMode: false }), done, staged };
}

function checkMagic(head: Buffer): void {
  for (const magic of COMPRESSED)
    if (magic.every((byte, at) => head[at] === byte))
      throw bad('compressed', undefined, 'the archive is compressed; upload a plain tar');
}

/** A name's segments when it has no `..` and is relative, else undefined. */
function safeSegments(name: string): string[] | undefined {
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  return segments.includes('..') ? undefined : segments;
}

/** Whether the relative `target`, read from the directory `dir` (segments), climbs above the root. */
function climbsAbove(dir: string[], target: string): boolean {
  let depth = dir.length;
  for (const segment of target.split('/')) {
    if (segment === '..') depth--;
    else if (segment !== '' && segment !== '.') depth++;
    if (depth < 0) return true;
  }
  return false;
}

/** A tar-stream parse failure (truncated, a bad checksum, not a tar at all) as `bad_archive`. */
function malformed(error: unknown): FileError {
  return bad('malformed', undefined, `the archive could not be read as a tar (${(error as Error).message})`);
}

/** Copies one entry's body into `pack`, counting it against the header's size. */
async function copyEntry(
  entry: tar.Entry,
  header: tar.Headers,
  pack: tar.Pack,
  summary: ArchiveSummary | undefined,
  name = header.name,
): Promise<void> {
  if (!summary) {
    // A directory made for an implied parent: no body, and `entry` is not read.
    await new Promise<void>((resolve, reject) => {
      // A destroyed pack fails the entry too: the callback reports it, never an unheard event.
      pack.entry(header, (error) => (error ? reject(error) : resolve())).on('error', () => {});
    });
    return;
  }
  const isFile = header.type === 'file';
  const size = isFile ? (header.size ?? 0) : 0;
  let sink!: ReturnType<tar.Pack['entry']>;
  // The callback runs once the entry is in the archive (at once for entries without a body).
  const written = new Promise<void>((resolve, reject) => {
    sink = pack.entry(header, (error) => (error ? reject(error) : resolve()));
  });
  sink.on('error', () => {}); // a destroyed pack fails its entry too; `written` reports it
  written.catch(() => {});
  let count = 0;
  for await (const chunk of entry) {
    const bytes = chunk as Buffer;
    count += bytes.length;
    if (count > size) throw bad('size_mismatch', name, `the entry "${name}" is longer than its header says`);
    if (!sink.write(bytes)) await new Promise((resolve) => sink.once('drain', resolve));
  }
  if (count !== size) throw bad('size_mismatch', name, `the entry "${name}" is shorter than its header says`);
  if (isFile) sink.end();
  await written;
  summary.bytes += size;
}
