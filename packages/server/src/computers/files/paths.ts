import { FileError, readOnly, WRITABLE_ROOT } from './driver.js';

/** The longest path accepted, in UTF-8 bytes (Linux's PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

/**
 * The one validation of a path on a computer: absolute, no NUL, at most 4096 UTF-8 bytes; `.` and
 * `..` segments are resolved lexically and never climb above `/`; repeated and trailing slashes are
 * dropped. Symlinks are not looked at here: they resolve inside the computer, in the driver. A path
 * that breaks a rule throws `FileError('invalid_path')`.
 *
 * @example
 * normalizeComputerPath('/home//svc/../svc/a.txt/'); // '/home/svc/a.txt'
 * normalizeComputerPath('/../../etc'); // '/etc'
 */
export function normalizeComputerPath(path: string): string {
  if (typeof path !== 'string' || !path.startsWith('/'))
    throw new FileError('invalid_path', 'the path must be absolute (start with /)', { path });
  if (path.includes('\0')) throw new FileError('invalid_path', 'the path must not contain NUL', {});
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES)
    throw new FileError('invalid_path', `the path is over ${MAX_PATH_BYTES} bytes`, {
      limit: MAX_PATH_BYTES,
    });
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/** The segments of a normalized path (`/` has none). */
export function segmentsOf(path: string): string[] {
  return path === '/' ? [] : path.slice(1).split('/');
}

/** The parent of a normalized path (`/` is its own parent). */
export function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}

/** The last segment of a normalized path (`/` for the root). */
export function baseName(path: string): string {
  return path === '/' ? '/' : path.slice(path.lastIndexOf('/') + 1);
}

/** `child` joined under the normalized `dir`. */
export function joinPath(dir: string, child: string): string {
  return dir === '/' ? `/${child}` : `${dir}/${child}`;
}

/** Whether a normalized path is in the writable place (`/home` and below). */
export function isWritablePath(path: string): boolean {
  return path === WRITABLE_ROOT || path.startsWith(`${WRITABLE_ROOT}/`);
}

/** Throws `read_only` unless a normalized path is in the writable place. */
export function assertWritable(path: string): void {
  if (!isWritablePath(path)) throw readOnly(path);
}

/** Compares names in byte order (UTF-8), as the listing is sorted. */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
