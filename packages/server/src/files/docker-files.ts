import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import tar from 'tar-stream';
import type { DriverComputer } from '../operations/computer.js';
import { checkArchive } from './archive-check.js';
import type { ArgvResult, EngineStat } from './docker-engine.js';
import { engineFailure, engineStat, execArgv, fileStatOf, typeOfMode } from './docker-engine.js';
import type { ComputerFiles, FileStat, WriteOptions } from './driver.js';
import {
  DEFAULT_MAX_ARCHIVE_ENTRIES,
  DEFAULT_QUOTA_BYTES,
  FileError,
  isDirectory,
  notDirectory,
  notFound,
  quotaExceeded,
  specialFile,
  tooLarge,
  WRITABLE_ROOT,
} from './driver.js';
import {
  assertWritable,
  baseName,
  compareNames,
  joinPath,
  normalizeComputerPath,
  parentOf,
} from './paths.js';
import { counted, nodeReadable, throwIfAborted, webReadable } from './streams.js';

/** The computer's container as the files need it: the Engine's handle, whether it runs, and its user. */
export interface FilesContainer {
  container: Docker.Container;
  running: boolean;
  /** `Config.User` of the container (`1000:1000`). */
  user: string;
}

export interface DockerFilesOptions {
  docker: Docker;
  /** The computer's container, checked to be this service's (labels); undefined when there is none. */
  container(computer: DriverComputer, signal: AbortSignal): Promise<FilesContainer | undefined>;
  /** Bytes of files under /home per computer (default 10 GiB). */
  quotaBytes?: number;
  /** Most entries of one uploaded archive (default 10 000). */
  maxArchiveEntries?: number;
  /** Where a body of unknown length is spooled (a fresh 0700 directory in it per write; default the OS temp dir). */
  spoolDir?: string;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** Symlinks followed in one resolution before it fails, as Linux's ELOOP bound. */
const MAX_SYMLINK_HOPS = 40;
/** The owner when the container's user is not numeric (the driver's non-root fallback). */
const FALLBACK_OWNER = { uid: 65534, gid: 65534 };

/**
 * Files on a Docker computer, ONLY through the Engine API socket: stat is `HEAD …/archive`, reads and
 * listings are `GET …/archive` (a tar, read as it streams), writes are `PUT …/archive` (a tar made
 * here), removal and the quota's measure are Engine execs with an argv (`rm`, `rmdir`, `du`). Paths
 * resolve inside the container's root (the Engine's own resolution), so no symlink reaches the host.
 * The root is read-only and `/home` is the container's own volume: the only writable place (the
 * Engine's archive endpoints do not see the tmpfs `/tmp`, moby#22020). Before a write, the target's
 * directory is resolved here, one `HEAD` per segment, so that a symlink leading out of /home is
 * `read_only` before any byte is sent.
 *
 * @example
 * const files = new DockerFiles({ docker, container: (computer, signal) => driver.filesContainer(computer, signal) });
 */
export class DockerFiles implements ComputerFiles {
  private readonly options: DockerFilesOptions;
  private readonly quotaBytes: number;
  private readonly maxArchiveEntries: number;
  private readonly log: NonNullable<DockerFilesOptions['log']>;

  constructor(options: DockerFilesOptions) {
    this.options = options;
    this.quotaBytes = options.quotaBytes ?? DEFAULT_QUOTA_BYTES;
    this.maxArchiveEntries = options.maxArchiveEntries ?? DEFAULT_MAX_ARCHIVE_ENTRIES;
    this.log = options.log ?? (() => {});
  }

  async stat(computer: DriverComputer, path: string, signal: AbortSignal): Promise<FileStat> {
    const normalized = normalizeComputerPath(path);
    return this.engine(normalized, signal, async () => {
      const { container } = await this.target(computer, signal);
      const stat = await engineStat(container, normalized, signal);
      if (!stat) throw notFound(normalized);
      return this.fileStat(container, normalized, normalized, stat, signal);
    });
  }

  /**
   * Reads the directory's tar and keeps its direct children's headers, skipping bodies. The Engine
   * sends the whole subtree (bodies included), so a listing costs as much as the subtree's bytes.
   */
  async list(computer: DriverComputer, path: string, signal: AbortSignal): Promise<FileStat[]> {
    const normalized = normalizeComputerPath(path);
    return this.engine(normalized, signal, async () => {
      const { container } = await this.target(computer, signal);
      const { path: canonical, stat } = await this.resolve(container, normalized, signal);
      if (typeOfMode(stat.mode) !== 'directory') throw notDirectory(normalized);
      const response = (await container.getArchive({
        path: canonical,
        abortSignal: signal,
      })) as IncomingMessage;
      const extract = tar.extract();
      response.pipe(extract as unknown as NodeJS.WritableStream);
      response.once('error', (error) => extract.destroy(error));
      const children: FileStat[] = [];
      let prefix: string | undefined;
      try {
        for await (const entry of extract) {
          const name = entry.header.name.replace(/^\/+|\/+$/g, '');
          entry.resume();
          if (prefix === undefined) {
            prefix = name;
            continue;
          }
          const rest = prefix === '' ? name : name.slice(prefix.length + 1);
          if (rest === '' || rest.includes('/')) continue;
          children.push(headerStat(joinPath(normalized, rest), entry.header));
        }
      } finally {
        response.destroy();
      }
      // A hard link's header has no size: that child's own stat has it (rare; one HEAD each).
      for (const [at, child] of children.entries())
        if (child.size < 0) {
          const stat = await engineStat(container, joinPath(canonical, child.name), signal);
          children[at] = stat ? fileStatOf(child.path, stat) : { ...child, size: 0 };
        }
      return children.sort((a, b) => compareNames(a.name, b.name));
    });
  }

  async read(
    computer: DriverComputer,
    path: string,
    signal: AbortSignal,
  ): Promise<{ stat: FileStat; body: ReadableStream<Uint8Array> }> {
    const normalized = normalizeComputerPath(path);
    return this.engine(normalized, signal, async () => {
      const { container } = await this.target(computer, signal);
      const { path: canonical, stat } = await this.resolve(container, normalized, signal);
      const type = typeOfMode(stat.mode);
      if (type === 'directory') throw isDirectory(normalized);
      if (type !== 'file') throw specialFile(normalized);
      const response = (await container.getArchive({
        path: canonical,
        abortSignal: signal,
      })) as IncomingMessage;
      const extract = tar.extract();
      response.pipe(extract as unknown as NodeJS.WritableStream);
      response.once('error', (error) => extract.destroy(error));
      async function* bytes(): AsyncGenerator<Uint8Array> {
        try {
          for await (const entry of extract) {
            for await (const chunk of entry) yield chunk as Uint8Array;
            return; // one entry: stop reading the Engine's stream once it is done
          }
        } finally {
          response.destroy();
          extract.destroy();
        }
      }
      return { stat: fileStatOf(normalized, stat), body: webReadable(bytes()) };
    });
  }

  async write(
    computer: DriverComputer,
    path: string,
    body: ReadableStream<Uint8Array>,
    options: WriteOptions,
  ): Promise<FileStat> {
    const { signal } = options;
    const normalized = normalizeComputerPath(path);
    assertWritable(normalized);
    if (options.size !== undefined && options.size > options.maxBytes) throw tooLarge(options.maxBytes);
    return this.engine(normalized, signal, async () => {
      const target = await this.target(computer, signal);
      const { container } = target;
      const dir = await this.directory(container, parentOf(normalized), options.parents, signal);
      const name = baseName(normalized);
      if (dir.missing.length === 0) {
        const existing = await engineStat(container, joinPath(dir.canonical, name), signal);
        if (existing && typeOfMode(existing.mode) === 'directory') throw isDirectory(normalized);
        if (existing && typeOfMode(existing.mode) === 'other') throw specialFile(normalized);
      }
      const used = await this.usedBytes(target, signal);
      if (options.size !== undefined && used + options.size > this.quotaBytes)
        throw quotaExceeded(this.quotaBytes);
      const checkQuota = (total: number) => {
        if (used + total > this.quotaBytes) throw quotaExceeded(this.quotaBytes);
      };
      const owner = await this.owner(target, signal);
      const written = dir.missing.length > 0 ? joinPath(dir.canonical, dir.missing.join('/')) : dir.canonical;
      const spool = options.size === undefined ? await this.spool(body, options, checkQuota) : undefined;
      try {
        const size = spool?.size ?? (options.size as number);
        const source = spool ? createReadStream(spool.file) : nodeReadable(body);
        const pack = tar.pack();
        pack.on('error', () => {}); // its reader (the upload) reports it
        const entries = (async () => {
          const prefix: string[] = [];
          for (const segment of dir.missing) {
            prefix.push(segment);
            await packEntry(pack, { name: prefix.join('/'), type: 'directory', mode: 0o755, ...owner });
          }
          const sink = pack.entry({
            name: [...prefix, name].join('/'),
            type: 'file',
            size,
            mode: options.mode & 0o777,
            mtime: new Date(),
            ...owner,
          });
          const entryDone = new Promise<void>((resolve, reject) => {
            sink.once('error', reject);
            sink.once('close', () => resolve());
          });
          entryDone.catch(() => {}); // awaited below unless the body fails first
          sink.on('error', () => {});
          let total = 0;
          for await (const chunk of counted(source, { maxBytes: options.maxBytes, signal })) {
            total += chunk.length;
            if (total > size)
              throw new FileError('too_large', 'the body is longer than its declared size', { size });
            if (!sink.write(Buffer.from(chunk))) await new Promise((resolve) => sink.once('drain', resolve));
          }
          if (total !== size)
            throw new FileError('unavailable', 'the body is shorter than its declared size', { size });
          sink.end();
          await entryDone;
          pack.finalize();
        })();
        entries.catch((error: unknown) => pack.destroy(error as Error));
        await Promise.all([
          entries,
          container.putArchive(Readable.from(pack), { path: dir.canonical, abortSignal: signal }),
        ]).catch(async (error: unknown) => {
          // Cut short (an abort, a body shorter or longer than declared): the Engine fails the
          // extraction and leaves no part of the file (a file being replaced is gone, though).
          throw await entries.then(
            () => error,
            (failure: unknown) => failure,
          );
        });
      } finally {
        if (spool) await rm(spool.dir, { recursive: true, force: true });
      }
      const stat = await engineStat(container, joinPath(written, name), signal);
      if (!stat)
        throw new FileError('unavailable', 'the file was written but cannot be found', { path: normalized });
      return fileStatOf(normalized, stat);
    });
  }

  async remove(
    computer: DriverComputer,
    path: string,
    options: { recursive: boolean; signal: AbortSignal },
  ): Promise<void> {
    const { signal } = options;
    const normalized = normalizeComputerPath(path);
    assertRemovable(normalized);
    return this.engine(normalized, signal, async () => {
      const target = await this.target(computer, signal);
      const parent = await this.resolve(target.container, parentOf(normalized), signal);
      if (typeOfMode(parent.stat.mode) !== 'directory') throw notDirectory(parentOf(normalized));
      const canonical = joinPath(parent.path, baseName(normalized));
      const stat = await engineStat(target.container, canonical, signal);
      if (!stat) throw notFound(normalized);
      assertRemovable(canonical);
      const isDir = typeOfMode(stat.mode) === 'directory';
      const argv = isDir && !options.recursive ? ['rmdir', '--', canonical] : ['rm', '-rf', '--', canonical];
      const result = await this.exec(target, argv, signal);
      if (result.exitCode === 0) return;
      const { stderr } = result;
      this.log('docker files: remove failed', { path: normalized, exitCode: result.exitCode, stderr });
      if (/not empty/i.test(stderr))
        throw new FileError('not_empty', `${normalized} is a directory that is not empty`, {
          path: normalized,
        });
      if (/read-only|permission denied/i.test(stderr))
        throw new FileError('read_only', `${normalized} cannot be changed by the computer's user`, {
          path: normalized,
        });
      throw new FileError('unavailable', `${normalized} could not be removed`, { path: normalized });
    });
  }

  async readArchive(
    computer: DriverComputer,
    path: string,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    const normalized = normalizeComputerPath(path);
    return this.engine(normalized, signal, async () => {
      const { container } = await this.target(computer, signal);
      const { path: canonical, stat } = await this.resolve(container, normalized, signal);
      if (typeOfMode(stat.mode) !== 'directory') throw notDirectory(normalized);
      const response = (await container.getArchive({
        path: canonical,
        abortSignal: signal,
      })) as IncomingMessage;
      const from = baseName(canonical);
      const to = normalized === '/' ? '.' : baseName(normalized);
      if (from === to) return webReadable(response);
      // Through a symlink: the entries are named after the path asked for, as `docker cp` names them.
      return webReadable(renameTop(response, from, to));
    });
  }

  async writeArchive(
    computer: DriverComputer,
    path: string,
    body: ReadableStream<Uint8Array>,
    options: WriteOptions,
  ): Promise<{ entries: number; bytes: number }> {
    const { signal } = options;
    const normalized = normalizeComputerPath(path);
    assertWritable(normalized);
    if (options.size !== undefined && options.size > options.maxBytes) throw tooLarge(options.maxBytes);
    return this.engine(normalized, signal, async () => {
      const target = await this.target(computer, signal);
      const { container } = target;
      const owner = await this.owner(target, signal);
      const dir = await this.directory(container, normalized, options.parents, signal);
      let destination = dir.canonical;
      if (dir.missing.length > 0) {
        const pack = tar.pack();
        pack.on('error', () => {}); // its reader (the upload) reports it
        const prefix: string[] = [];
        for (const segment of dir.missing) {
          prefix.push(segment);
          pack.entry({ name: prefix.join('/'), type: 'directory', mode: 0o755, ...owner });
        }
        pack.finalize();
        await container.putArchive(Readable.from(pack), { path: dir.canonical, abortSignal: signal });
        destination = joinPath(dir.canonical, dir.missing.join('/'));
      }
      const used = await this.usedBytes(target, signal);
      const checked = checkArchive(nodeReadable(body), {
        maxEntries: this.maxArchiveEntries,
        maxBytes: options.maxBytes,
        quota: { left: Math.max(0, this.quotaBytes - used), limit: this.quotaBytes },
        ...owner,
        signal,
      });
      try {
        await container.putArchive(checked.tar, { path: destination, abortSignal: signal });
      } catch (error) {
        // A refused entry cut the upload short: the check's reason, not the Engine's, is the answer.
        throw await checked.done.then(
          () => error,
          (failure: unknown) => failure,
        );
      }
      return checked.done;
    });
  }

  /**
   * The numeric owner of what a write makes: the container's user (`Config.User`, from the image).
   * A user or group given by name is looked up in the container's `/etc/passwd` and `/etc/group`
   * (read through the Engine); one that is not there is the driver's non-root fallback, 65534.
   */
  private async owner(target: FilesContainer, signal: AbortSignal): Promise<{ uid: number; gid: number }> {
    const [user = '', group] = target.user.split(':');
    const numeric = (value: string | undefined) =>
      value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
    let uid = numeric(user);
    let gid = numeric(group);
    if (uid === undefined) {
      const entry = (await this.readSmall(target.container, '/etc/passwd', signal))
        .split('\n')
        .map((line) => line.split(':'))
        .find((fields) => fields[0] === user);
      uid = numeric(entry?.[2]) ?? FALLBACK_OWNER.uid;
      if (group === undefined) gid = numeric(entry?.[3]) ?? FALLBACK_OWNER.gid;
    }
    if (gid === undefined && group !== undefined) {
      const entry = (await this.readSmall(target.container, '/etc/group', signal))
        .split('\n')
        .map((line) => line.split(':'))
        .find((fields) => fields[0] === group);
      gid = numeric(entry?.[2]) ?? FALLBACK_OWNER.gid;
    }
    return { uid, gid: gid ?? uid };
  }

  /** A small text file of the container (at most 64 KiB kept), or '' when it is not there. */
  private async readSmall(container: Docker.Container, path: string, signal: AbortSignal): Promise<string> {
    let response: IncomingMessage;
    try {
      response = (await container.getArchive({ path, abortSignal: signal })) as IncomingMessage;
    } catch {
      return '';
    }
    const extract = tar.extract();
    extract.on('error', () => {});
    response.pipe(extract as unknown as NodeJS.WritableStream);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const entry of extract) {
        for await (const chunk of entry) {
          if (size < 64 * 1024) chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
        }
        break;
      }
    } finally {
      response.destroy();
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Runs `work`, turning the Engine's failures into `FileError`s. */
  private async engine<T>(path: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    throwIfAborted(signal);
    try {
      return await work();
    } catch (error) {
      throw engineFailure(error, path, signal, this.log);
    }
  }

  private async target(computer: DriverComputer, signal: AbortSignal): Promise<FilesContainer> {
    const found = await this.options.container(computer, signal);
    if (!found)
      throw new FileError('unavailable', "the computer's container is gone", { reason: 'no_container' });
    return found;
  }

  private async exec(target: FilesContainer, argv: string[], signal: AbortSignal): Promise<ArgvResult> {
    if (!target.running)
      throw new FileError('unavailable', 'the computer is not running', { reason: 'not_running' });
    return execArgv(this.options.docker, target.container, argv, signal);
  }

  /**
   * Bytes used under /home, measured with one Engine exec of `du -sk /home` (argv): a round trip and
   * a walk of the volume per write, whose cost grows with the number of files there. It counts disk
   * blocks (KiB), so a little more than the files' bytes: the quota errs on the safe side.
   */
  private async usedBytes(target: FilesContainer, signal: AbortSignal): Promise<number> {
    const result = await this.exec(target, ['du', '-sk', WRITABLE_ROOT], signal);
    const kib = Number.parseInt(result.stdout, 10);
    if (result.exitCode !== 0 || !Number.isFinite(kib))
      throw new FileError('unavailable', 'the files quota could not be measured', {});
    return kib * 1024;
  }

  /**
   * The path with every symlink resolved inside the container, and its stat: one `HEAD` per segment,
   * each on an already resolved parent, so the Engine's answer for a symlink is about that link alone.
   */
  private async resolve(
    container: Docker.Container,
    path: string,
    signal: AbortSignal,
    hops = { count: 0 },
  ): Promise<{ path: string; stat: EngineStat }> {
    if (path === '/') {
      const stat = await engineStat(container, '/', signal);
      if (!stat) throw notFound('/');
      return { path: '/', stat };
    }
    const parent = await this.resolve(container, parentOf(path), signal, hops);
    if (typeOfMode(parent.stat.mode) !== 'directory') throw notDirectory(parentOf(path));
    const here = joinPath(parent.path, baseName(path));
    const stat = await engineStat(container, here, signal);
    if (!stat) throw notFound(path);
    if (typeOfMode(stat.mode) !== 'symlink') return { path: here, stat };
    if (++hops.count > MAX_SYMLINK_HOPS)
      throw new FileError('not_found', `${path}: too many levels of symbolic links`, { path });
    const link = await this.linkText(container, here, signal);
    const next = normalizeComputerPath(link.startsWith('/') ? link : `${parent.path}/${link}`);
    return this.resolve(container, next, signal, hops);
  }

  /**
   * The directory `path` resolved, for a write: its nearest existing ancestor must be a directory
   * (`not_directory`) in a writable place (`read_only`); the segments below it that are missing are
   * returned to be made in the write's own tar, or `not_found` unless `parents`.
   */
  private async directory(
    container: Docker.Container,
    path: string,
    parents: boolean,
    signal: AbortSignal,
  ): Promise<{ canonical: string; missing: string[] }> {
    const missing: string[] = [];
    for (let at = path; ; at = parentOf(at)) {
      let found: { path: string; stat: EngineStat } | undefined;
      try {
        found = await this.resolve(container, at, signal);
      } catch (error) {
        if (!(error instanceof FileError && error.reason === 'not_found') || at === '/') throw error;
      }
      if (!found) {
        missing.unshift(baseName(at));
        continue;
      }
      if (typeOfMode(found.stat.mode) !== 'directory') throw notDirectory(at);
      assertWritable(found.path);
      if (missing.length > 0 && !parents) throw notFound(path);
      return { canonical: found.path, missing };
    }
  }

  /** A symlink's own text, from the one-entry tar the Engine gives for it. */
  private async linkText(container: Docker.Container, path: string, signal: AbortSignal): Promise<string> {
    const response = (await container.getArchive({ path, abortSignal: signal })) as IncomingMessage;
    const extract = tar.extract();
    response.pipe(extract as unknown as NodeJS.WritableStream);
    try {
      for await (const entry of extract) {
        entry.resume();
        return entry.header.linkname ?? '';
      }
      return '';
    } finally {
      response.destroy();
    }
  }

  private async fileStat(
    container: Docker.Container,
    path: string,
    enginePath: string,
    stat: EngineStat,
    signal: AbortSignal,
  ): Promise<FileStat> {
    if (typeOfMode(stat.mode) !== 'symlink') return fileStatOf(path, stat);
    return fileStatOf(path, stat, await this.linkText(container, enginePath, signal));
  }

  /**
   * A body of unknown length, written to a 0600 file in a fresh 0700 directory (the tar header needs
   * the size before the bytes), counted against `maxBytes` and the quota as it arrives. The caller
   * removes the directory.
   */
  private async spool(
    body: ReadableStream<Uint8Array>,
    options: WriteOptions,
    checkQuota: (total: number) => void,
  ): Promise<{ dir: string; file: string; size: number }> {
    const dir = await mkdtemp(join(this.options.spoolDir ?? tmpdir(), 'svc-files-'));
    const file = join(dir, 'body');
    try {
      const handle = await open(file, 'wx', 0o600);
      let size = 0;
      try {
        for await (const chunk of counted(nodeReadable(body), {
          maxBytes: options.maxBytes,
          signal: options.signal,
          onBytes: checkQuota,
        })) {
          await handle.write(chunk);
          size += chunk.length;
        }
      } finally {
        await handle.close();
      }
      return { dir, file, size };
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }
}

/** `remove` refuses what is not under /home, and /home itself (the computer's volume). */
function assertRemovable(path: string): void {
  assertWritable(path);
  if (path === WRITABLE_ROOT)
    throw new FileError('read_only', `${WRITABLE_ROOT} itself cannot be removed`, { path });
}

/** A stat from a listing's tar header; a hard link's size is -1 (unknown: its header has none). */
function headerStat(path: string, header: tar.Headers): FileStat {
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

async function packEntry(pack: tar.Pack, header: tar.Headers): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    pack.entry(header, (error) => (error ? reject(error) : resolve())),
  );
}

/** The Engine's tar with the first segment of every name `from` renamed `to`, streamed. */
function renameTop(source: IncomingMessage, from: string, to: string): Readable {
  const extract = tar.extract();
  const pack = tar.pack();
  pack.on('error', () => {}); // its reader (the download) reports it
  extract.on('error', () => {}); // reported through the loop below and `pack`
  source.pipe(extract as unknown as NodeJS.WritableStream);
  source.once('error', (error) => extract.destroy(error));
  (async () => {
    for await (const entry of extract) {
      const header = { ...entry.header };
      if (header.name === from || header.name.startsWith(`${from}/`))
        header.name = to + header.name.slice(from.length);
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
