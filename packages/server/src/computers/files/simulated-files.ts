import tar from 'tar-stream';
import type { DriverComputer } from '../computer.js';
import { checkArchive } from './archive-check.js';
import type { ComputerFiles, FileStat, WriteOptions } from './driver.js';
import {
  DEFAULT_MAX_ARCHIVE_ENTRIES,
  DEFAULT_QUOTA_BYTES,
  FileError,
  notEmpty,
  notFound,
  WRITABLE_ROOT,
} from './driver.js';
import { baseName, joinPath, normalizeComputerPath, parentOf } from './paths.js';
import {
  assertDirectory,
  assertExists,
  assertParentsMade,
  assertRegularFile,
  assertRemovable,
  assertReplaceable,
  assertWithinQuota,
  assertWriteAncestor,
  checkWriteRequest,
  quotaLeft,
} from './preconditions.js';
import type { SimDirectory, SimNode } from './simulated-tree.js';
import { cloneTree, directory, initialTree, resolvePath, statOf, treeBytes } from './simulated-tree.js';
import { counted, nodeReadable, throwIfAborted, webReadable } from './streams.js';

export interface SimulatedFilesOptions {
  /** Bytes of regular files under /home per computer (default 10 GiB); also bounds this process's memory. */
  quotaBytes?: number;
  /** Most entries of one uploaded archive (default 10 000). */
  maxArchiveEntries?: number;
}

/** The owner of what an archive upload writes (the busybox image's `svc`); the tree keeps no owners. */
const SIMULATED_USER = { uid: 1000, gid: 1000 };
/** Bytes of a file handed out per chunk when read. */
const READ_CHUNK = 64 * 1024;

/**
 * SIMULATED files: one in-memory tree per computer id, made on first use (`/`, `/bin`,
 * `/etc/hostname`, `/home`, `/home/svc`, `/tmp`) and forgotten when the computer is deleted. Bytes are
 * held in this process's memory, bounded by the quota; nothing touches a disk. The rules are the
 * Docker driver's: only `/home` and below is writable, symlinks resolve inside the tree, FIFOs are
 * never read or written, archives pass `checkArchive`, and the same `FileError` reasons come back.
 *
 * @example
 * const files = new SimulatedFiles();
 * await files.write(computer, '/home/svc/a.txt', body, { mode: 0o644, parents: false, maxBytes, signal });
 */
export class SimulatedFiles implements ComputerFiles {
  private readonly trees = new Map<string, SimDirectory>();
  private readonly quotaBytes: number;
  private readonly maxArchiveEntries: number;

  constructor(options: SimulatedFilesOptions = {}) {
    this.quotaBytes = options.quotaBytes ?? DEFAULT_QUOTA_BYTES;
    this.maxArchiveEntries = options.maxArchiveEntries ?? DEFAULT_MAX_ARCHIVE_ENTRIES;
  }

  /**
   * SIMULATED snapshot: a copy of the computer's `/home` (what a snapshot keeps, design §4.2), made
   * now; later writes to the computer do not change it.
   */
  copyHome(computer: DriverComputer): SimDirectory {
    const home = this.tree(computer).children.get('home');
    return home?.type === 'directory' ? cloneTree(home) : directory();
  }

  /** SIMULATED create from a snapshot: the computer's tree starts with a copy of the snapshot's `/home`. */
  seedHome(computer: DriverComputer, home: SimDirectory): void {
    const root = initialTree(computer.name);
    root.children.set('home', cloneTree(home));
    this.trees.set(computer.id, root);
  }

  /** Forgets a computer's tree (its `delete` action). */
  forget(computerId: string): void {
    this.trees.delete(computerId);
  }

  /** SIMULATED `ln -s target path` inside the computer (tests and demos; no exec runs here). */
  symlink(computer: DriverComputer, path: string, target: string): void {
    const found = this.lookup(computer, normalizeComputerPath(path), false);
    found.parent.children.set(found.name, { type: 'symlink', mode: 0o777, mtime: new Date(), target });
  }

  /** SIMULATED `mkfifo path` inside the computer: a special file that is never read or written. */
  mkfifo(computer: DriverComputer, path: string): void {
    const found = this.lookup(computer, normalizeComputerPath(path), false);
    found.parent.children.set(found.name, { type: 'other', mode: 0o644, mtime: new Date() });
  }

  async stat(computer: DriverComputer, path: string, signal: AbortSignal): Promise<FileStat> {
    throwIfAborted(signal);
    const normalized = normalizeComputerPath(path);
    const { node } = this.lookup(computer, normalized, false);
    assertExists(node, normalized);
    return statOf(node, normalized);
  }

  async list(computer: DriverComputer, path: string, signal: AbortSignal): Promise<FileStat[]> {
    throwIfAborted(signal);
    const normalized = normalizeComputerPath(path);
    const { node } = this.lookup(computer, normalized, true);
    assertExists(node, normalized);
    assertDirectory(normalized, node.type);
    return [...node.children.entries()]
      .sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      .map(([name, child]) => statOf(child, joinPath(normalized, name)));
  }

  async read(
    computer: DriverComputer,
    path: string,
    signal: AbortSignal,
  ): Promise<{ stat: FileStat; body: ReadableStream<Uint8Array> }> {
    throwIfAborted(signal);
    const normalized = normalizeComputerPath(path);
    const { node } = this.lookup(computer, normalized, true);
    assertExists(node, normalized);
    assertRegularFile(normalized, node.type);
    const data = node.data;
    async function* chunks() {
      for (let at = 0; at < data.length; at += READ_CHUNK) {
        throwIfAborted(signal);
        yield data.slice(at, at + READ_CHUNK);
      }
    }
    return { stat: statOf(node, normalized), body: webReadable(chunks()) };
  }

  async write(
    computer: DriverComputer,
    path: string,
    body: ReadableStream<Uint8Array>,
    options: WriteOptions,
  ): Promise<FileStat> {
    const { signal } = options;
    throwIfAborted(signal);
    const normalized = normalizeComputerPath(path);
    checkWriteRequest(normalized, options);
    const parent = this.ensureDirectory(computer, parentOf(normalized), options.parents);
    assertReplaceable(normalized, parent.node.children.get(baseName(normalized))?.type);
    const used = this.usedBytes(computer);
    if (options.size !== undefined) assertWithinQuota(used, options.size, this.quotaBytes);
    const chunks: Uint8Array[] = [];
    for await (const chunk of counted(nodeReadable(body), {
      maxBytes: options.maxBytes,
      signal,
      onBytes: (total) => assertWithinQuota(used, total, this.quotaBytes),
    }))
      chunks.push(chunk);
    const node: SimNode = {
      type: 'file',
      mode: options.mode & 0o777,
      mtime: new Date(),
      data: new Uint8Array(Buffer.concat(chunks)),
    };
    parent.node.children.set(baseName(normalized), node);
    return statOf(node, normalized);
  }

  async remove(
    computer: DriverComputer,
    path: string,
    options: { recursive: boolean; signal: AbortSignal },
  ): Promise<void> {
    throwIfAborted(options.signal);
    const normalized = normalizeComputerPath(path);
    assertRemovable(normalized);
    const found = this.lookup(computer, normalized, false);
    assertExists(found.node, normalized);
    assertRemovable(found.canonical);
    if (found.node.type === 'directory' && found.node.children.size > 0 && !options.recursive)
      throw notEmpty(normalized);
    found.parent.children.delete(found.name);
  }

  async readArchive(
    computer: DriverComputer,
    path: string,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    throwIfAborted(signal);
    const normalized = normalizeComputerPath(path);
    const { node } = this.lookup(computer, normalized, true);
    assertExists(node, normalized);
    assertDirectory(normalized, node.type);
    const pack = tar.pack();
    pack.on('error', () => {}); // its reader reports it
    const top = normalized === '/' ? '.' : baseName(normalized);
    (async () => {
      const files = new Map<SimNode, string>();
      const add = async (name: string, entry: SimNode): Promise<void> => {
        throwIfAborted(signal);
        const header = { name, mode: entry.mode & 0o777, mtime: entry.mtime };
        if (entry.type === 'directory') {
          // A directory's entry name ends in `/`, as the Engine (and docker cp) write it.
          await addEntry(pack, { ...header, name: `${name}/`, type: 'directory' });
          const names = [...entry.children.keys()].sort((a, b) =>
            Buffer.compare(Buffer.from(a), Buffer.from(b)),
          );
          for (const child of names) await add(`${name}/${child}`, entry.children.get(child) as SimNode);
        } else if (entry.type === 'symlink') {
          await addEntry(pack, { ...header, type: 'symlink', linkname: entry.target });
        } else if (entry.type === 'file') {
          const first = files.get(entry);
          if (first) await addEntry(pack, { ...header, type: 'link', linkname: first });
          else {
            files.set(entry, name);
            await addEntry(pack, { ...header, type: 'file', size: entry.data.length }, entry.data);
          }
        }
        // Special files are left out: they are never read.
      };
      await add(top, node);
      pack.finalize();
    })().catch((error: unknown) => pack.destroy(error as Error));
    return webReadable(pack as unknown as AsyncIterable<Uint8Array>);
  }

  async writeArchive(
    computer: DriverComputer,
    path: string,
    body: ReadableStream<Uint8Array>,
    options: WriteOptions,
  ): Promise<{ entries: number; bytes: number }> {
    const { signal } = options;
    throwIfAborted(signal);
    const normalized = normalizeComputerPath(path);
    checkWriteRequest(normalized, options);
    const target = this.ensureDirectory(computer, normalized, options.parents);
    const used = this.usedBytes(computer);
    const checked = checkArchive(nodeReadable(body), {
      maxEntries: this.maxArchiveEntries,
      maxBytes: options.maxBytes,
      quota: quotaLeft(used, this.quotaBytes),
      ...SIMULATED_USER,
      signal,
    });
    const root = this.tree(computer);
    const extract = tar.extract();
    checked.tar.pipe(extract as unknown as NodeJS.WritableStream);
    checked.tar.once('error', (error) => extract.destroy(error));
    try {
      for await (const entry of extract) {
        const { header } = entry;
        const entryPath = joinPath(target.canonical, header.name.replace(/\/$/, ''));
        const parent = this.ensureDirectory(computer, parentOf(entryPath), true);
        const name = baseName(entryPath);
        const mode = (header.mode ?? 0o644) & 0o777;
        const mtime = header.mtime ?? new Date();
        const existing = parent.node.children.get(name);
        if (header.type === 'directory') {
          if (existing?.type === 'directory') existing.mode = mode;
          else parent.node.children.set(name, { ...directory(mode), mtime });
        } else if (header.type === 'symlink') {
          parent.node.children.set(name, {
            type: 'symlink',
            mode: 0o777,
            mtime,
            target: header.linkname ?? '',
          });
        } else if (header.type === 'link') {
          const linked = resolvePath(root, joinPath(target.canonical, header.linkname ?? ''), false).node;
          if (linked?.type !== 'file')
            throw new FileError('bad_archive', `the hard link "${header.name}" leads nowhere`, {
              rule: 'hard_link',
              entry: header.name,
            });
          parent.node.children.set(name, linked);
        } else {
          const chunks: Uint8Array[] = [];
          for await (const chunk of entry) chunks.push(chunk as Uint8Array);
          parent.node.children.set(name, {
            type: 'file',
            mode,
            mtime,
            data: new Uint8Array(Buffer.concat(chunks)),
          });
          continue;
        }
        entry.resume();
      }
    } catch (error) {
      extract.destroy();
      await checked.done.catch(() => {});
      throw await checked.done.then(
        () => error,
        (failure: unknown) => failure,
      );
    }
    return checked.done;
  }

  /** The tree of a computer, made on first use. */
  private tree(computer: DriverComputer): SimDirectory {
    let root = this.trees.get(computer.id);
    if (!root) {
      root = initialTree(computer.name);
      this.trees.set(computer.id, root);
    }
    return root;
  }

  private lookup(computer: DriverComputer, path: string, followLast: boolean) {
    return resolvePath(this.tree(computer), path, followLast);
  }

  private usedBytes(computer: DriverComputer): number {
    const home = resolvePath(this.tree(computer), WRITABLE_ROOT, true).node;
    return home ? treeBytes(home) : 0;
  }

  /**
   * The directory at `path`, made with its missing parents when `parents` (else a missing one is
   * `not_found`). Before anything is made, the nearest existing ancestor must resolve, through
   * symlinks, to a writable place (`read_only` otherwise) and be a directory.
   */
  private ensureDirectory(
    computer: DriverComputer,
    path: string,
    parents: boolean,
  ): { node: SimDirectory; canonical: string } {
    const root = this.tree(computer);
    const missing: string[] = [];
    let at = path;
    for (;;) {
      let found: ReturnType<typeof resolvePath> | undefined;
      try {
        found = resolvePath(root, at, true);
      } catch (error) {
        if (!(error instanceof FileError && error.reason === 'not_found')) throw error;
      }
      if (found?.node) {
        assertWriteAncestor(at, found.node.type, found.canonical);
        if (missing.length === 0) return { node: found.node, canonical: found.canonical };
        assertParentsMade(path, missing.length, parents);
        let dir = found.node;
        let canonical = found.canonical;
        for (const name of missing.reverse()) {
          const made = directory();
          dir.children.set(name, made);
          dir = made;
          canonical = joinPath(canonical, name);
        }
        return { node: dir, canonical };
      }
      if (at === '/') throw notFound(path);
      missing.push(baseName(at));
      at = parentOf(at);
    }
  }
}

async function addEntry(pack: tar.Pack, header: tar.Headers, data?: Uint8Array): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const callback = (error?: Error | null) => (error ? reject(error) : resolve());
    const sink = data
      ? pack.entry(header, Buffer.from(data.buffer, data.byteOffset, data.length), callback)
      : pack.entry(header, callback);
    // A pack destroyed under it (the client cancelled the download) fails the entry too: the
    // callback reports it; as an event, nobody would hear it, and it would end the process.
    sink.on('error', () => {});
  });
}
