// The preconditions of the files operations, each rule written once for every driver: a driver finds
// out what a path is (its tree, or the Engine's stat) and asks here whether the operation may go on,
// so one request is refused with the same `FileError` (reason, message, details) on every driver.
import type { FileType, WriteOptions } from './driver.js';
import {
  FileError,
  isDirectory,
  notDirectory,
  notFound,
  parentNotDirectory,
  quotaExceeded,
  specialFile,
  tooLarge,
  WRITABLE_ROOT,
} from './driver.js';
import { assertWritable } from './paths.js';

/** Symlinks followed in one resolution before it fails, as Linux's ELOOP bound. */
export const MAX_SYMLINK_HOPS = 40;

/**
 * A write (`write`, `writeArchive`) before anything is looked up: its path in the writable place
 * (`read_only`), its declared size within the request's limit (`too_large`).
 *
 * @example
 * checkWriteRequest('/home/svc/a.txt', { size: 2, maxBytes: 1024 });
 */
export function checkWriteRequest(path: string, options: Pick<WriteOptions, 'size' | 'maxBytes'>): void {
  assertWritable(path);
  if (options.size !== undefined && options.size > options.maxBytes) throw tooLarge(options.maxBytes);
}

/**
 * What `path` names exists (`not_found`, naming `path` as asked: a missing parent too).
 *
 * @example
 * assertExists(await engineStat(container, path, signal), path);
 */
export function assertExists<T>(found: T | undefined, path: string): asserts found is T {
  if (found === undefined) throw notFound(path);
}

/**
 * Each parent of what `path` names resolves to a directory (`not_directory`, naming `path` as asked,
 * whatever symlinks the resolution went through): `type` is the parent's.
 *
 * @example
 * assertParentDirectory('/home/svc/a.txt/b', 'file'); // throws: a parent is not a directory
 */
export function assertParentDirectory(path: string, type: FileType): asserts type is 'directory' {
  if (type !== 'directory') throw parentNotDirectory(path);
}

/**
 * What a read (`read`) takes: a regular file, not a directory (`is_directory`) nor a device, FIFO or
 * socket (`special_file`).
 *
 * @example
 * assertRegularFile('/home/svc/a.txt', 'file');
 */
export function assertRegularFile(path: string, type: FileType): asserts type is 'file' {
  if (type === 'directory') throw isDirectory(path);
  if (type !== 'file') throw specialFile(path);
}

/**
 * What `list` and `readArchive` take: a directory (`not_directory`).
 *
 * @example
 * assertDirectory('/home/svc', 'directory');
 */
export function assertDirectory(path: string, type: FileType): asserts type is 'directory' {
  if (type !== 'directory') throw notDirectory(path);
}

/**
 * What a file write may replace: nothing yet, a regular file or a symlink (itself, not where it leads),
 * never a directory (`is_directory`) or a special file (`special_file`).
 *
 * @example
 * assertReplaceable('/home/svc/a.txt', undefined); // a new file
 */
export function assertReplaceable(path: string, existing: FileType | undefined): void {
  if (existing === 'directory') throw isDirectory(path);
  if (existing === 'other') throw specialFile(path);
}

/**
 * The nearest existing ancestor `at` of the directory a write goes into (resolved, through symlinks,
 * to `canonical`): a directory (`not_directory`) in the writable place (`read_only`). Then
 * {@link assertParentsMade}.
 *
 * @example
 * assertWriteAncestor('/home/svc', 'directory', '/home/svc');
 */
export function assertWriteAncestor(
  at: string,
  type: FileType,
  canonical: string,
): asserts type is 'directory' {
  assertDirectory(at, type);
  assertWritable(canonical);
}

/**
 * The directory `path` a write goes into has `missing` directories below its nearest existing
 * ancestor: they are made only when the write asks for `parents` (`not_found` of `path` otherwise).
 *
 * @example
 * assertParentsMade('/home/svc/new/dir', 2, true);
 */
export function assertParentsMade(path: string, missing: number, parents: boolean): void {
  if (missing > 0 && !parents) throw notFound(path);
}

/**
 * `bytes` more on top of the `used` bytes of the computer's files stay within their quota
 * (`quota_exceeded`): a declared size before any byte is read, then the bytes read so far.
 *
 * @example
 * assertWithinQuota(used, options.size, quotaBytes);
 */
export function assertWithinQuota(used: number, bytes: number, quotaBytes: number): void {
  if (used + bytes > quotaBytes) throw quotaExceeded(quotaBytes);
}

/**
 * The quota an archive upload has left, as `checkArchive` takes it.
 *
 * @example
 * checkArchive(body, { quota: quotaLeft(used, quotaBytes), ... });
 */
export function quotaLeft(used: number, quotaBytes: number): { left: number; limit: number } {
  return { left: Math.max(0, quotaBytes - used), limit: quotaBytes };
}

/**
 * What `remove` may remove: a path in the writable place, not `/home` itself (the computer's volume),
 * both as asked and as resolved (`read_only`).
 *
 * @example
 * assertRemovable('/home/svc/a.txt');
 */
export function assertRemovable(path: string): void {
  assertWritable(path);
  if (path === WRITABLE_ROOT)
    throw new FileError('read_only', `${WRITABLE_ROOT} itself cannot be removed`, { path });
}

/**
 * One more symlink followed in resolving `path` (`hops` of them so far) stays within
 * {@link MAX_SYMLINK_HOPS} (`not_found`, as Linux's ELOOP).
 *
 * @example
 * assertLinkHops(++hops, path);
 */
export function assertLinkHops(hops: number, path: string): void {
  if (hops > MAX_SYMLINK_HOPS)
    throw new FileError('not_found', `${path}: too many levels of symbolic links`, { path });
}
