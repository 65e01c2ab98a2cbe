import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import type { FileStat, FileType } from './driver.js';
import { FileError, notDirectory, notFound, parentNotDirectory, readOnly } from './driver.js';
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
    if (status === 500) throw parentNotDirectory(path);
    throw error;
  }
  response.resume();
  const header = response.headers['x-docker-container-path-stat'];
  if (typeof header !== 'string')
    throw new FileError('unavailable', 'the Docker Engine gave no path stat', {});
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as EngineStat;
}

/** The status of an Engine answer (dockerode's `statusCode`), if it was one. */
function statusOf(error: unknown): number | undefined {
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
  if (status === 404) return notFound(path);
  if (/read-only/i.test(message)) return readOnly(path);
  if (/not a directory/i.test(message)) return notDirectory(path);
  return new FileError('unavailable', 'the Docker Engine failed the files operation', {
    ...(status === undefined ? {} : { engine_status: status }),
  });
}

/** What an argv exec printed and how it ended. */
export interface ArgvResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Bytes kept of each output of an argv exec (`du` prints one line, `rm` a few). */
export const ARGV_OUTPUT_BYTES = 4096;

/**
 * Runs `argv` in a running container as its user (or `user`) with the Engine's exec API: the program itself, no
 * shell in between, so no path can be read as shell syntax. Outputs are capped at 4 KiB each. On
 * abort or after `timeoutMs` the connection is dropped and the call fails (the Engine has no call to
 * kill an exec; `rm` and `du` end by themselves).
 */
export async function execArgv(
  docker: Docker,
  container: Docker.Container,
  argv: string[],
  signal: AbortSignal,
  timeoutMs = 60_000,
  user?: string,
): Promise<ArgvResult> {
  const exec = await container.exec({
    Cmd: argv,
    ...(user === undefined ? {} : { User: user }),
    AttachStdout: true,
    AttachStderr: true,
    abortSignal: signal,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as import('node:stream').Duplex;
  const outputs = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (Buffer.concat(outputs[name]).length < ARGV_OUTPUT_BYTES) outputs[name].push(chunk);
        done();
      },
    });
  docker.modem.demuxStream(stream, sink('stdout'), sink('stderr'));
  const stop = () => stream.destroy();
  const timer = setTimeout(stop, timeoutMs);
  signal.addEventListener('abort', stop, { once: true });
  try {
    await new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
  if (signal.aborted) throw signal.reason;
  for (let attempt = 0; ; attempt++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null)
      return {
        exitCode: info.ExitCode,
        stdout: Buffer.concat(outputs.stdout).toString('utf8'),
        stderr: Buffer.concat(outputs.stderr).toString('utf8'),
      };
    if (attempt >= 50) throw new FileError('unavailable', `${argv[0]} did not finish in the computer`, {});
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
