import type { IncomingMessage } from 'node:http';
import type Docker from 'dockerode';
import type { FileStat, FileType } from './driver.js';
import { FileError } from './driver.js';
import { baseName } from './paths.js';

/** What the Engine's `HEAD /containers/{id}/archive` reports (the X-Docker-Container-Path-Stat header). */
export interface EngineStat {
  name: string;
  size: number;
  /** A Go `os.FileMode`: permission bits plus type bits from bit 19 up. */
  mode: number;
  mtime: string;
  /** For a symlink, where it leads. */
  linkTarget: string;
}

/** Bit `n` of a Go `os.FileMode` (above 2^31, so no 32-bit bitwise operators). */
const bit = (mode: number, n: number) => Math.floor(mode / 2 ** n) % 2 === 1;

/** The type of a Go `os.FileMode`: dir (31), symlink (27), device (26), pipe (25), socket (24), char device (21), irregular (19). */
export function typeOfMode(mode: number): FileType {
  if (bit(mode, 31)) return 'directory';
  if (bit(mode, 27)) return 'symlink';
  if (bit(mode, 26) || bit(mode, 25) || bit(mode, 24) || bit(mode, 21) || bit(mode, 19)) return 'other';
  return 'file';
}

/** A `FileStat` from the Engine's stat of `path`; directories report size 0 on every driver. */
export function fileStatOf(path: string, stat: EngineStat, linkTarget?: string): FileStat {
  const type = typeOfMode(stat.mode);
  return {
    path,
    name: baseName(path),
    type,
    size:
      type === 'directory' || type === 'other'
        ? 0
        : type === 'symlink'
          ? Buffer.byteLength(linkTarget ?? '')
          : stat.size,
    mode: stat.mode % 0o1000,
    modifiedAt: new Date(stat.mtime),
    ...(type === 'symlink' ? { linkTarget: linkTarget ?? '' } : {}),
  };
}

/**
 * The Engine's stat of a path in a container (`HEAD …/archive`): the last segment is not followed
 * (a symlink is reported as itself), the parents are resolved inside the container. `undefined` when
 * the path does not exist; a parent that is not a directory is the Engine's 500, reported here as
 * `not_directory`.
 */
export async function engineStat(
  container: Docker.Container,
  path: string,
  signal: AbortSignal,
): Promise<EngineStat | undefined> {
  let response: IncomingMessage;
  try {
    response = (await container.infoArchive({ path, abortSignal: signal })) as IncomingMessage;
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return undefined;
    if (status === 500)
      throw new FileError('not_directory', `${path}: a parent is not a directory`, { path });
    throw error;
  }
  response.resume();
  const header = response.headers['x-docker-container-path-stat'];
  if (typeof header !== 'string')
    throw new FileError('unavailable', 'the Docker Engine gave no path stat', {});
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as EngineStat;
}

/** The status of an Engine answer (dockerode's `statusCode`), if it was one. */
export function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number } | undefined)?.statusCode;
}

/**
 * The Engine's failure as a `FileError`; its own words (which name host paths) go to `log` only.
 */
export function engineFailure(
  error: unknown,
  path: string,
  signal: AbortSignal,
  log: (message: string, fields?: Record<string, unknown>) => void,
): unknown {
  if (error instanceof FileError || signal.aborted) return error;
  const message = String((error as Error | undefined)?.message ?? error);
  const status = statusOf(error);
  log('docker files: the Engine refused', { path, status, error: message });
  if (status === 404) return new FileError('not_found', `${path} does not exist`, { path });
  if (/read-only/i.test(message))
    return new FileError('read_only', 'only /home and below can be written', { path });
  if (/not a directory/i.test(message))
    return new FileError('not_directory', `${path} is not a directory`, { path });
  return new FileError('unavailable', 'the Docker Engine failed the files operation', {
    ...(status === undefined ? {} : { engine_status: status }),
  });
}
