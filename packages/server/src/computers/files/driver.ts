import type { DriverComputer } from '../computer.js';

/** What kind of thing a path names; `other` is a device, FIFO or socket (never read or written). */
export type FileType = 'file' | 'directory' | 'symlink' | 'other';

/**
 * What `stat` and `list` report about a path; mirrors the spec's `FileInfo` schema (snake_case there;
 * the HTTP side maps). `linkTarget` is a symlink's own text, as `readlink` prints it.
 *
 * @example
 * const info: FileStat = { path: '/home/svc/a.txt', name: 'a.txt', type: 'file', size: 2, mode: 0o644, modifiedAt: new Date() };
 */
export interface FileStat {
  path: string;
  name: string;
  type: FileType;
  size: number;
  /** Permission bits only, e.g. `0o644`. */
  mode: number;
  modifiedAt: Date;
  linkTarget?: string;
}

/** Why a files operation failed; the HTTP side maps each to one of the published errors. */
export type FileErrorReason =
  /** Not an absolute path, a NUL in it, or over 4096 bytes (`normalizeComputerPath`): 400 invalid_argument (path). */
  | 'invalid_path'
  /** The path (or a parent) does not exist: 404 not_found. */
  | 'not_found'
  /** A file was expected: 400 invalid_argument (path). */
  | 'is_directory'
  /** A directory was expected (list, archive, parent): 400 invalid_argument (path). */
  | 'not_directory'
  /** Delete of a non-empty directory without `recursive`: 400 invalid_argument. */
  | 'not_empty'
  /** Outside the writable places (`/home` and below): 400 invalid_argument (path). */
  | 'read_only'
  /** A device, FIFO or socket: never read or written: 400 invalid_argument. */
  | 'special_file'
  /** Over the per-request byte limit: 413 payload_too_large. */
  | 'too_large'
  /** The computer's file quota would be exceeded: 403 quota_exceeded. */
  | 'quota_exceeded'
  /** A tar rule broken (`details.entry`, `details.rule`): 400 invalid_argument. */
  | 'bad_archive'
  /** The engine failed: 503/500. */
  | 'unavailable';

/**
 * A files operation's failure with a stable `reason`; `details` are safe to publish (no host paths).
 *
 * @example
 * throw new FileError('read_only', 'only /home and below can be written', { path });
 */
export class FileError extends Error {
  override name = 'FileError';
  constructor(
    readonly reason: FileErrorReason,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** How a write goes. */
export interface WriteOptions {
  /** Permission bits of a new or replaced file (`0o644`); setuid, setgid and sticky bits are dropped. */
  mode: number;
  /** Create missing parent directories (else a missing parent is `not_found`). */
  parents: boolean;
  /** The body's length when known (Content-Length): refused early when over `maxBytes`. */
  size?: number;
  /** The per-request byte limit (`SVC_FILES_MAX_BYTES`): past it the write fails `too_large`. */
  maxBytes: number;
  signal: AbortSignal;
}

/**
 * Files on a computer, the same rules on every driver: paths are absolute POSIX paths (see
 * `normalizeComputerPath`), symlinks resolve inside the computer, only `/home` and below is writable,
 * special files are never read or written, and the regular files under `/home` are bounded by a quota.
 * Every method honours `signal`.
 *
 * @example
 * const { stat, body } = await driver.files.read(computer, '/etc/hostname', signal);
 */
export interface ComputerFiles {
  /** What `path` is; a symlink is reported as itself (`lstat`), with its `linkTarget`. */
  stat(computer: DriverComputer, path: string, signal: AbortSignal): Promise<FileStat>;
  /** Direct children of a directory, sorted by name (byte order). */
  list(computer: DriverComputer, path: string, signal: AbortSignal): Promise<FileStat[]>;
  /** A regular file's bytes, streamed; stat first (size, mtime for ETag). */
  read(
    computer: DriverComputer,
    path: string,
    signal: AbortSignal,
  ): Promise<{ stat: FileStat; body: ReadableStream<Uint8Array> }>;
  /**
   * Writes (creates or replaces) a regular file from a stream, never buffering it whole; counts bytes
   * and fails `too_large` past `maxBytes`. Returns the new stat.
   */
  write(
    computer: DriverComputer,
    path: string,
    body: ReadableStream<Uint8Array>,
    options: WriteOptions,
  ): Promise<FileStat>;
  remove(
    computer: DriverComputer,
    path: string,
    options: { recursive: boolean; signal: AbortSignal },
  ): Promise<void>;
  /** A directory as a tar stream; entry names relative to the directory's parent, like `docker cp` (dir/, dir/a.txt). */
  readArchive(
    computer: DriverComputer,
    path: string,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>>;
  /** Extracts a tar stream into a directory, after checking every entry with `checkArchive`, streaming. */
  writeArchive(
    computer: DriverComputer,
    path: string,
    tar: ReadableStream<Uint8Array>,
    options: WriteOptions,
  ): Promise<{ entries: number; bytes: number }>;
}

/** The writable place of every computer: `/home` and below. */
export const WRITABLE_ROOT = '/home';

/** The default file quota of a computer: 10 GiB of regular files under `/home`. */
export const DEFAULT_QUOTA_BYTES = 10 * 1024 ** 3;

/** The default per-request byte limit (`SVC_FILES_MAX_BYTES`): 1 GiB. */
export const DEFAULT_FILES_MAX_BYTES = 1024 ** 3;

/** The default bound on the entries of one uploaded archive. */
export const DEFAULT_MAX_ARCHIVE_ENTRIES = 10_000;

/** The details of a `quota_exceeded` failure. */
export function quotaExceeded(limit: number): FileError {
  return new FileError('quota_exceeded', `the computer's files would exceed their quota of ${limit} bytes`, {
    quota: 'files_bytes',
    limit,
  });
}

/** The `too_large` failure of a request over `maxBytes`. */
export function tooLarge(maxBytes: number): FileError {
  return new FileError('too_large', `the request is over the limit of ${maxBytes} bytes`, {
    limit: maxBytes,
  });
}

/** The `not_found` failure of a path. */
export function notFound(path: string): FileError {
  return new FileError('not_found', `${path} does not exist`, { path });
}
/** The `not_directory` failure of a path. */
export function notDirectory(path: string): FileError {
  return new FileError('not_directory', `${path} is not a directory`, { path });
}
/** The `not_directory` failure of a path whose parents do not all resolve to directories. */
export function parentNotDirectory(path: string): FileError {
  return new FileError('not_directory', `${path}: a parent is not a directory`, { path });
}
/** The `not_empty` failure of a directory removed without `recursive`. */
export function notEmpty(path: string): FileError {
  return new FileError('not_empty', `${path} is a directory that is not empty`, { path });
}
/** The `read_only` failure of a path outside the writable place. */
export function readOnly(path: string): FileError {
  return new FileError('read_only', `only ${WRITABLE_ROOT} and below can be written`, { path });
}
/** The `is_directory` failure of a path. */
export function isDirectory(path: string): FileError {
  return new FileError('is_directory', `${path} is a directory`, { path });
}
/** The `special_file` failure of a path. */
export function specialFile(path: string): FileError {
  return new FileError('special_file', `${path} is a device, FIFO or socket: it is never read or written`, {
    path,
  });
}
