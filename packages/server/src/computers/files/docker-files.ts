import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import tar from 'tar-stream';
import type { DriverComputer } from '../computer.js';
import type { ExecRequest, ExecResult } from '../driver.js';
import { checkArchive } from './archive-check.js';
import type { ArgvResult, EngineStat } from './docker-engine.js';
import {
  ARGV_OUTPUT_BYTES,
  engineFailure,
  engineStat,
  execArgv,
  fileStatOf,
  typeOfMode,
} from './docker-engine.js';
import {
  containerOwner,
  linkText,
  resolveInContainer,
  resolveParent,
  statsOf,
  writableDirectory,
} from './docker-paths.js';
import { headerStat, renameTop } from './docker-tar.js';
import type { ComputerFiles, FileStat, WriteOptions } from './driver.js';
import {
  DEFAULT_MAX_ARCHIVE_ENTRIES,
  DEFAULT_QUOTA_BYTES,
  FileError,
  notEmpty,
  WRITABLE_ROOT,
} from './driver.js';
import { engineSocketOf, getArchive, putOneFile } from './engine-archive.js';
import { baseName, compareNames, joinPath, normalizeComputerPath, parentOf } from './paths.js';
import {
  assertDirectory,
  assertExists,
  assertRegularFile,
  assertRemovable,
  assertReplaceable,
  assertWithinQuota,
  checkWriteRequest,
  quotaLeft,
} from './preconditions.js';
import { spoolBody } from './spool.js';
import { nodeReadable, throwIfAborted, webReadable } from './streams.js';
import { ENGINE_CHUNK_BYTES, oneFileTar, type TarEntryHeader } from './tar-entry.js';
import { firstFileStream } from './tar-read.js';

/**
 * When a cut-short upload's temporary parts are removed again, after the first removal (see
 * `removeLater`): the Engine may go on extracting what the cut left for a while, longer on a busy host.
 */
const CLEAN_UP_AGAIN_MS = [2000, 5000];

/** How long the Engine may take to answer a files operation's first call (the container's inspect). */
const ENGINE_ANSWER_MS = 10_000;

/** How long a command of the files (`mv`, `rm`, `du`) may run. */
const ARGV_TIMEOUT_MS = 60_000;

/**
 * Runs a command through a runner already in the container, quicker than an Engine exec (the driver's
 * exec agent); `undefined`, having run nothing, when the runner cannot take it now.
 */
export type QuickRunner = (request: ExecRequest) => Promise<ExecResult | undefined>;

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
  /**
   * The container's idle runner of commands as its own user, if any (the driver's exec agent): the
   * files' `mv`, `rm` and `du` go to it first, and to an Engine exec when it cannot take them.
   */
  quickRunner?: (containerId: string) => QuickRunner | undefined;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * Files on a Docker computer, ONLY through the Engine API socket: stat is `HEAD …/archive`, reads and
 * listings are `GET …/archive` (a tar, read as it streams), writes are `PUT …/archive` (a tar made
 * here), removal and the quota's measure are commands with an argv (`rm`, `rmdir`, `du`: the exec
 * agent's, else an Engine exec, see {@link DockerFiles.exec}). Paths
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
  /** The last `du` of each container's /home, plus the bytes written since (see {@link usedBytes}). */
  private readonly usage = new Map<string, { measuredAt: number; bytes: number }>();

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
      assertExists(stat, normalized);
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
      const { path: canonical, stat } = await resolveInContainer(container, normalized, signal);
      assertDirectory(normalized, typeOfMode(stat.mode));
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
      const { path: canonical, stat } = await resolveInContainer(container, normalized, signal);
      assertRegularFile(normalized, typeOfMode(stat.mode));
      const engine = engineSocketOf(this.options.docker);
      const response = engine
        ? await getArchive(engine, container.id, canonical, signal)
        : ((await container.getArchive({ path: canonical, abortSignal: signal })) as IncomingMessage);
      // The one entry's body, sliced out of the Engine's chunks; the rest of the tar is not read.
      const body = firstFileStream(response, () => response.destroy());
      return { stat: fileStatOf(normalized, stat), body };
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
    checkWriteRequest(normalized, options);
    return this.engine(normalized, signal, async () => {
      const target = await this.target(computer, signal);
      const { container } = target;
      const name = baseName(normalized);
      // Independent round trips to the Engine, at once; their failures in this order of precedence.
      const [dir, used, owner] = await inOrder([
        (async () => {
          const stats = statsOf(container, signal);
          stats.prefetch(normalized); // the target's stat too, when no symlink is on the way
          const dir = await writableDirectory(
            container,
            parentOf(normalized),
            options.parents,
            signal,
            stats.lookup,
          );
          if (dir.missing.length === 0) {
            const existing = await stats.lookup(joinPath(dir.canonical, name));
            assertReplaceable(normalized, existing && typeOfMode(existing.mode));
          }
          return dir;
        })(),
        this.usedBytes(target, signal),
        containerOwner(target.container, target.user, signal),
      ] as const);
      if (options.size !== undefined) assertWithinQuota(used, options.size, this.quotaBytes);
      const checkQuota = (total: number) => assertWithinQuota(used, total, this.quotaBytes);
      const written = dir.missing.length > 0 ? joinPath(dir.canonical, dir.missing.join('/')) : dir.canonical;
      const spool =
        options.size === undefined
          ? await spoolBody(body, options, checkQuota, this.options.spoolDir)
          : undefined;
      try {
        const size = spool?.size ?? (options.size as number);
        const source = (): AsyncIterable<Uint8Array> =>
          spool
            ? createReadStream(spool.file, { highWaterMark: ENGINE_CHUNK_BYTES })
            : (body as unknown as AsyncIterable<Uint8Array>);
        const mtime = new Date();
        const prefix: string[] = [];
        const directories = dir.missing.map((segment) => {
          prefix.push(segment);
          return {
            name: prefix.join('/'),
            type: 'directory' as const,
            size: 0,
            mode: 0o755,
            mtime,
            ...owner,
          };
        });
        const file = {
          name: [...prefix, name].join('/'),
          type: 'file' as const,
          size,
          mode: options.mode & 0o777,
          mtime,
          ...owner,
        };
        const engine = engineSocketOf(this.options.docker);
        if (engine) {
          const chunks = spool
            ? createReadStream(spool.file, { highWaterMark: ENGINE_CHUNK_BYTES })
            : nodeReadable(body);
          try {
            if (size <= WHOLE_BYTES) {
              // Small: read whole (bounded), then sent at once; a body cut short sends nothing.
              const whole = await readWhole(chunks, size, signal);
              // Every byte is here: the write is finished even if the client goes now. The Engine
              // extracts what it is sent as it comes, so a tar cut off by the client's abort would
              // leave (or put in place of a good file) a truncated one.
              await putOneFile(
                engine,
                container.id,
                dir.canonical,
                directories,
                file,
                whole,
                AbortSignal.timeout(ARGV_TIMEOUT_MS),
              );
            } else {
              await this.putRenamed(target, dir.canonical, file, (staged) =>
                putOneFile(engine, container.id, dir.canonical, directories, staged, chunks, signal),
              );
            }
          } catch (error) {
            chunks.destroy();
            throw error;
          }
        } else {
          // An Engine reached otherwise (TCP, SSH): through dockerode, staged and renamed alike.
          await this.putRenamed(target, dir.canonical, file, async (staged) => {
            const tarball = oneFileTar(directories, staged, source(), { maxBytes: options.maxBytes, signal });
            try {
              await container.putArchive(tarball.stream, { path: dir.canonical, abortSignal: signal });
            } catch (error) {
              throw tarball.failure() ?? error;
            }
            if (tarball.failure()) throw tarball.failure();
          });
        }
        this.wrote(target, size);
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
      const parent = await resolveParent(target.container, normalized, signal);
      const canonical = joinPath(parent.path, baseName(normalized));
      const stat = await engineStat(target.container, canonical, signal);
      assertExists(stat, normalized);
      assertRemovable(canonical);
      const isDir = typeOfMode(stat.mode) === 'directory';
      const argv = isDir && !options.recursive ? ['rmdir', '--', canonical] : ['rm', '-rf', '--', canonical];
      this.usage.delete(target.container.id);
      const result = await this.exec(target, argv, signal);
      if (result.exitCode === 0) return;
      const { stderr } = result;
      this.log('docker files: remove failed', { path: normalized, exitCode: result.exitCode, stderr });
      if (/not empty/i.test(stderr)) throw notEmpty(normalized);
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
      const { path: canonical, stat } = await resolveInContainer(container, normalized, signal);
      assertDirectory(normalized, typeOfMode(stat.mode));
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
    checkWriteRequest(normalized, options);
    return this.engine(normalized, signal, async () => {
      const target = await this.target(computer, signal);
      const { container } = target;
      // At once, before anything is made (the quota's measure needs a running computer).
      const [owner, dir, used] = await inOrder([
        containerOwner(target.container, target.user, signal),
        writableDirectory(container, normalized, options.parents, signal),
        this.usedBytes(target, signal),
      ] as const);
      let destination = dir.canonical;
      if (dir.missing.length > 0) {
        const pack = tar.pack();
        pack.on('error', () => {}); // its reader (the upload) reports it
        const prefix: string[] = [];
        for (const segment of dir.missing) {
          prefix.push(segment);
          // Its failure (the pack destroyed by an abort) is the upload's, reported by its reader.
          pack
            .entry({ name: prefix.join('/'), type: 'directory', mode: 0o755, ...owner })
            .on('error', () => {});
        }
        pack.finalize();
        await container.putArchive(Readable.from(pack), { path: dir.canonical, abortSignal: signal });
        destination = joinPath(dir.canonical, dir.missing.join('/'));
      }
      // Each file is extracted under a temporary name beside its own, then renamed into place once
      // the whole archive is in: the Engine extracts as it reads, so a cut-off upload would leave the
      // entry it was writing truncated (or in place of a good file).
      const token = randomBytes(8).toString('hex');
      let count = 0;
      const checked = checkArchive(nodeReadable(body), {
        maxEntries: this.maxArchiveEntries,
        maxBytes: options.maxBytes,
        quota: quotaLeft(used, this.quotaBytes),
        ...owner,
        signal,
        stage: (name) =>
          `${name.slice(0, name.length - baseName(name).length)}.svc-upload-${token}-${count++}`,
      });
      const removeStaged = () =>
        this.removeLater(
          target,
          owner,
          checked.staged.map(([staged]) => joinPath(destination, staged)),
        );
      try {
        await container.putArchive(checked.tar, { path: destination, abortSignal: signal });
      } catch (error) {
        removeStaged();
        // A refused entry cut the upload short: the check's reason, not the Engine's, is the answer.
        throw await checked.done.then(
          () => error,
          (failure: unknown) => failure,
        );
      }
      const done = await checked.done.catch((error: unknown) => {
        removeStaged();
        throw error;
      });
      await this.renameStaged(target, owner, destination, checked.staged).catch((error: unknown) => {
        removeStaged();
        throw error;
      });
      this.wrote(target, done.bytes);
      return { entries: done.entries, bytes: done.bytes };
    });
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
    // The Engine's first answer is bounded: an Engine that stopped answering (paused, hung) gets its
    // caller a 503 with Retry-After, not a request that waits as long as the client does.
    const bounded = AbortSignal.any([signal, AbortSignal.timeout(ENGINE_ANSWER_MS)]);
    const found = await this.options.container(computer, bounded).catch((error: unknown) => {
      if (signal.aborted || !bounded.aborted) throw error;
      throw new FileError(
        'unavailable',
        `the Docker Engine did not answer within ${ENGINE_ANSWER_MS / 1000} s`,
        {
          reason: 'engine_unresponsive',
        },
      );
    });
    if (!found)
      throw new FileError('unavailable', "the computer's container is gone", { reason: 'no_container' });
    return found;
  }

  /**
   * A large file, streamed to the Engine under a temporary name beside its own (`.svc-upload-…`,
   * with the file's owner and mode), then renamed over it (`mv -f -T`, one command as the computer's
   * user; as root when the user may not, e.g. in /home itself): a transfer cut short (an abort, a body
   * shorter or longer than declared, the Engine failing) leaves the file as it was, and its temporary
   * part is removed.
   */
  /**
   * Runs a command as the computer's user; where that user may not (or its name is none of the
   * container's /etc/passwd), as the owner the files were given (`uid:gid`), then as root (/home itself
   * is root's).
   */
  private async asOwner(
    target: FilesContainer,
    argv: string[],
    signal: AbortSignal,
    owner: Owner,
  ): Promise<ArgvResult> {
    const notPermitted = /permission denied|unable to find user|no matching entries in passwd/i;
    let result: ArgvResult | undefined;
    for (const user of [undefined, `${owner.uid}:${owner.gid}`, '0']) {
      result = await this.exec(target, argv, signal, user).catch((error: unknown) => {
        if (notPermitted.test(String(error))) return undefined;
        throw error;
      });
      if (result && (result.exitCode === 0 || !notPermitted.test(result.stderr))) return result;
    }
    return result as ArgvResult;
  }

  /**
   * Removes what a failed write left under temporary names, now and twice more a little later (2 s and
   * 5 s): the Engine may still be extracting what the failure cut short when the first removal runs
   * (its side of the connection settles later). Never waited for; a removal that fails is logged.
   */
  private removeLater(target: FilesContainer, owner: Owner, paths: string[]): void {
    if (paths.length === 0) return;
    const remove = () => {
      for (const batch of argvBatches(paths))
        void this.asOwner(target, ['rm', '-f', '--', ...batch], AbortSignal.timeout(10_000), owner).catch(
          (error: unknown) => this.log('docker files: temporary parts not removed', { error: String(error) }),
        );
    };
    remove();
    for (const ms of CLEAN_UP_AGAIN_MS) setTimeout(remove, ms).unref();
  }

  /**
   * Renames an extracted archive's staged files into place (`mv -f -T`, in the archive's order, in
   * as few commands as the argument list allows). Once every byte is in, the renames are done even
   * if the client goes (bounded by the command's own timeout).
   */
  private async renameStaged(
    target: FilesContainer,
    owner: Owner,
    dir: string,
    staged: [string, string][],
  ): Promise<void> {
    const pairs = staged.flatMap(([from, to]) => [joinPath(dir, from), joinPath(dir, to)]);
    for (const batch of argvBatches(pairs, 2)) {
      const moved = await this.asOwner(
        target,
        ['sh', '-c', RENAME_PAIRS, 'sh', ...batch],
        AbortSignal.timeout(ARGV_TIMEOUT_MS),
        owner,
      );
      if (moved.exitCode === 0) continue;
      this.log('docker files: archive rename failed', { exitCode: moved.exitCode, stderr: moved.stderr });
      if (/is a directory/i.test(moved.stderr))
        throw new FileError('is_directory', 'an entry of the archive names a directory of the computer', {});
      throw new FileError('unavailable', 'the archive was written but could not be put in place', {});
    }
  }

  private async putRenamed(
    target: FilesContainer,
    dir: string,
    file: TarEntryHeader,
    put: (staged: TarEntryHeader) => Promise<void>,
  ): Promise<void> {
    const name = baseName(file.name);
    const parent = file.name.slice(0, file.name.length - name.length);
    const temporary = `${parent}.svc-upload-${randomBytes(8).toString('hex')}`;
    const at = (relative: string) => joinPath(dir, relative);
    const asOwner = (argv: string[], within: AbortSignal) => this.asOwner(target, argv, within, file);
    const cleanUp = () => this.removeLater(target, file, [at(temporary)]);
    try {
      await put({ ...file, name: temporary });
    } catch (error) {
      cleanUp();
      throw error;
    }
    // Every byte is in: the rename is done even if the client goes now (bounded by the command's own
    // timeout), so the path holds the old file or the new one, whole, never the temporary part.
    const moved = await asOwner(
      ['mv', '-f', '-T', '--', at(temporary), at(file.name)],
      AbortSignal.timeout(ARGV_TIMEOUT_MS),
    ).catch((error: unknown) => {
      cleanUp();
      throw error;
    });
    if (moved.exitCode === 0) return;
    cleanUp();
    this.log('docker files: rename failed', {
      path: at(file.name),
      exitCode: moved.exitCode,
      stderr: moved.stderr,
    });
    if (/is a directory/i.test(moved.stderr))
      throw new FileError('is_directory', `${at(file.name)} is a directory`, { path: at(file.name) });
    if (/permission denied|read-only/i.test(moved.stderr))
      throw new FileError('read_only', `${at(file.name)} cannot be changed by the computer's user`, {
        path: at(file.name),
      });
    throw new FileError('unavailable', 'the file was written but could not be put in place', {});
  }

  /**
   * Runs `argv` in the container: through its exec agent when one is idle and the command is the
   * container's user's (4–8 ms for a large upload's `mv`), else through an Engine exec (create,
   * start, inspect: 40–150 ms), as `user` when given.
   */
  private async exec(
    target: FilesContainer,
    argv: string[],
    signal: AbortSignal,
    user?: string,
  ): Promise<ArgvResult> {
    if (!target.running)
      throw new FileError('unavailable', 'the computer is not running', { reason: 'not_running' });
    const runner = user === undefined ? this.options.quickRunner?.(target.container.id) : undefined;
    const quick = await runner?.({
      argv,
      timeoutMs: ARGV_TIMEOUT_MS,
      maxOutputBytes: ARGV_OUTPUT_BYTES,
      signal,
    });
    if (quick) {
      const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
      return { exitCode: quick.exitCode, stdout: text(quick.stdout), stderr: text(quick.stderr) };
    }
    return execArgv(this.options.docker, target.container, argv, signal, ARGV_TIMEOUT_MS, user);
  }

  /**
   * Bytes used under /home, measured with one Engine exec of `du -sk /home` (argv): a round trip and
   * a walk of the volume, whose cost grows with the number of files there. It counts disk blocks
   * (KiB), so a little more than the files' bytes: the quota errs on the safe side. A measure is
   * kept for {@link USAGE_TTL_MS} per container, with the bytes written through the API since added
   * (a file replaced counts twice: on the safe side too); a removal through the API forgets it. The
   * quota is thus what the API writes on top of a measure at most that old: commands run on the
   * computer write to /home without the API, and are not held to it anyway.
   */
  private async usedBytes(target: FilesContainer, signal: AbortSignal): Promise<number> {
    const key = target.container.id;
    const known = this.usage.get(key);
    if (known && performance.now() - known.measuredAt < USAGE_TTL_MS) return known.bytes;
    const measuredAt = performance.now();
    const result = await this.exec(target, ['du', '-sk', WRITABLE_ROOT], signal);
    const kib = Number.parseInt(result.stdout, 10);
    if (result.exitCode !== 0 || !Number.isFinite(kib))
      throw new FileError('unavailable', 'the files quota could not be measured', {});
    this.usage.set(key, { measuredAt, bytes: kib * 1024 });
    if (this.usage.size > 10_000) this.usage.delete(this.usage.keys().next().value as string);
    return kib * 1024;
  }

  /** Adds bytes written through the API to the container's kept measure (see {@link usedBytes}). */
  private wrote(target: FilesContainer, bytes: number): void {
    const known = this.usage.get(target.container.id);
    if (known) known.bytes += bytes;
  }

  private async fileStat(
    container: Docker.Container,
    path: string,
    enginePath: string,
    stat: EngineStat,
    signal: AbortSignal,
  ): Promise<FileStat> {
    if (typeOfMode(stat.mode) !== 'symlink') return fileStatOf(path, stat);
    return fileStatOf(path, stat, await linkText(container, enginePath, signal));
  }
}

/** How long a measure of a computer's /home (`du`) is used for its quota, plus the bytes written since. */
const USAGE_TTL_MS = 10_000;

/**
 * Awaits every promise, then answers their values or throws the first failure in the list's order
 * (not in time): round trips made at once fail as they would have one after the other.
 */
async function inOrder<const T extends readonly Promise<unknown>[]>(
  promises: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(promises);
  for (const result of settled) if (result.status === 'rejected') throw result.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

/** Who owns what a write makes: the computer's user, as numbers. */
type Owner = { uid: number; gid: number };

/** Renames each pair of its arguments (`from to …`) in order, stopping at the first that fails. */
const RENAME_PAIRS = 'while [ "$#" -gt 1 ]; do mv -f -T -- "$1" "$2" || exit 1; shift 2; done';

/** Most bytes of paths in one command's arguments (well under Linux's 2 MiB for arguments). */
const ARGV_BATCH_BYTES = 64 * 1024;

/** `items` cut into runs whose bytes stay under {@link ARGV_BATCH_BYTES}, each a multiple of `unit` long. */
function argvBatches(items: string[], unit = 1): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (let at = 0; at < items.length; at += unit) {
    const group = items.slice(at, at + unit);
    const size = group.reduce((sum, item) => sum + Buffer.byteLength(item) + 1, 0);
    if (batch.length > 0 && bytes + size > ARGV_BATCH_BYTES) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(...group);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** A body up to this size is read whole before it is sent (see `write`); larger ones are renamed into place. */
export const WHOLE_BYTES = 1024 * 1024;

/**
 * A body of `size` bytes read whole (at most {@link WHOLE_BYTES}), as a stream of one chunk; fails as
 * `putOneFile` would when the body is shorter or longer, before anything is sent.
 */
async function readWhole(source: Readable, size: number, signal: AbortSignal): Promise<Readable> {
  const pieces: Buffer[] = [];
  let total = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    throwIfAborted(signal);
    total += chunk.length;
    if (total > size) throw new FileError('too_large', 'the body is longer than its declared size', { size });
    pieces.push(chunk);
  }
  throwIfAborted(signal);
  if (total < size)
    throw new FileError('unavailable', 'the body is shorter than its declared size', { size });
  return Readable.from(total === 0 ? [] : [Buffer.concat(pieces, total)]);
}
