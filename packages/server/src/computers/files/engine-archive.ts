import type { Agent, IncomingMessage } from 'node:http';
import { request } from 'node:http';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { FileError } from './driver.js';
import { fileBytesMoved } from './heap.js';
import { abortReason } from './streams.js';
import { END_OF_TAR, ENGINE_BUFFER_BYTES, padding, type TarEntryHeader, tarHeader } from './tar-entry.js';

/**
 * The bytes of a one-file tar (see {@link putOneFile}): every header (a directory's, the file's, with
 * their pax headers when a name needs one), the body padded to its 512-byte block, the two zero blocks
 * that end a tar. Known before the body is read, since its size is: the Engine's `PUT …/archive` gets
 * a `Content-Length` instead of chunks.
 *
 * @example
 * oneFileTarLength([], { name: 'a.txt', type: 'file', size: 5, mode: 0o644, mtime, uid: 1000, gid: 1000 }); // 512 + 512 + 1024
 */
export function oneFileTarLength(directories: TarEntryHeader[], file: TarEntryHeader): number {
  let length = 0;
  for (const entry of [...directories, file]) length += tarHeader(entry).length;
  return length + file.size + padding(file.size).length + END_OF_TAR.length;
}

/** Where the Engine listens, when it is a local socket this process can open itself. */
export interface EngineSocket {
  socketPath: string;
  /** The API version prefix of every path (`v1.47`), when the client was given one. */
  version?: string;
  agent?: Agent;
}

/** The Engine's socket of a dockerode client; undefined when it reaches the Engine otherwise (TCP, SSH). */
export function engineSocketOf(docker: Docker): EngineSocket | undefined {
  const modem = docker.modem as { socketPath?: unknown; version?: unknown; agent?: unknown };
  if (typeof modem.socketPath !== 'string' || modem.socketPath === '') return undefined;
  return {
    socketPath: modem.socketPath,
    ...(typeof modem.version === 'string' && modem.version !== '' ? { version: modem.version } : {}),
    ...(modem.agent ? { agent: modem.agent as Agent } : {}),
  };
}

/** Bytes of an Engine refusal kept for its message. */
const REFUSAL_BYTES = 4096;

/**
 * Writes one file (and the missing directories before it) into a container with the Engine's
 * `PUT /containers/{id}/archive?path=dir`: a tar made here, sent with its `Content-Length` (known from
 * the file's declared size, {@link oneFileTarLength}), the body's chunks written on to the Engine's
 * socket as they come, never joined or copied, reading ahead of the Engine up to
 * {@link ENGINE_BUFFER_BYTES}. `source` must carry exactly `file.size` bytes: past them the write
 * fails `too_large`, short of them `unavailable`; either way the connection is dropped before the tar
 * is complete, so the Engine fails its extraction instead of ending the file with bytes it was not
 * sent. An abort drops the connection too. The Engine's refusal is thrown as dockerode throws it (an
 * `Error` with `statusCode`), for `engineFailure`.
 *
 * @example
 * await putOneFile(engineSocketOf(docker), container.id, '/home/svc', [], header, body, signal);
 */
export function putOneFile(
  engine: EngineSocket,
  containerId: string,
  dir: string,
  directories: TarEntryHeader[],
  file: TarEntryHeader,
  source: Readable,
  signal: AbortSignal,
): Promise<void> {
  const size = file.size;
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    let total = 0;
    let settled = false;
    let waiting = false;
    let ended = false;
    const req = request({
      socketPath: engine.socketPath,
      ...(engine.agent ? { agent: engine.agent } : {}),
      method: 'PUT',
      path: archivePath(engine, containerId, dir),
      headers: {
        'content-type': 'application/x-tar',
        'content-length': String(oneFileTarLength(directories, file)),
      },
    });
    const detach = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('close', onClose);
      signal.removeEventListener('abort', onAbort);
      // The source's 'error' stays heard (`fail` does nothing once settled): a body that fails after
      // this write did (the client's abort reaches the signal first, then the body) would otherwise
      // raise an 'error' nobody listens to, which ends the process.
    };
    function fail(error: unknown): void {
      if (settled) return;
      settled = true;
      detach();
      source.pause();
      req.destroy();
      reject(error);
    }
    function onAbort(): void {
      fail(abortReason(signal));
    }
    function onData(chunk: Buffer): void {
      total += chunk.length;
      fileBytesMoved(chunk.length);
      if (total > size) {
        fail(new FileError('too_large', 'the body is longer than its declared size', { size }));
        return;
      }
      req.write(chunk);
      if (!waiting && req.writableLength >= ENGINE_BUFFER_BYTES) {
        waiting = true;
        source.pause();
      }
    }
    function onClose(): void {
      if (!ended) fail(new FileError('unavailable', 'the body was cut short', { size }));
    }
    function onEnd(): void {
      ended = true;
      if (total < size) {
        fail(new FileError('unavailable', 'the body is shorter than its declared size', { size }));
        return;
      }
      source.off('data', onData);
      source.off('close', onClose);
      req.end(Buffer.concat([padding(size), END_OF_TAR]));
    }
    req.on('drain', () => {
      if (!waiting || settled) return;
      waiting = false;
      source.resume();
    });
    req.on('error', (error) => fail(error));
    req.on('response', (res) => {
      const kept: Buffer[] = [];
      let keptBytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (keptBytes < REFUSAL_BYTES) kept.push(chunk);
        keptBytes += chunk.length;
      });
      res.on('error', (error) => fail(error));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          if (settled) return;
          settled = true;
          detach();
          return resolve();
        }
        fail(engineError(status, Buffer.concat(kept).toString('utf8').slice(0, REFUSAL_BYTES)));
      });
    });
    signal.addEventListener('abort', onAbort, { once: true });
    req.write(Buffer.concat([...directories.map(tarHeader), tarHeader(file)]));
    source.on('data', onData);
    source.once('end', onEnd);
    source.on('error', fail);
    source.once('close', onClose);
  });
}

/**
 * The Engine's `GET /containers/{id}/archive?path=` (a tar of the path, uncompressed) over its socket,
 * as it streams: the response, once its status is 200. A refusal is thrown as dockerode throws it (an
 * `Error` with `statusCode`). The request goes around dockerode's, which formats every request's
 * options in depth (`util.inspect` of the agent and its sockets) whether its debug log is on or not.
 *
 * @example
 * const response = await getArchive(engineSocketOf(docker), container.id, '/home/svc/a.txt', signal);
 */
export function getArchive(
  engine: EngineSocket,
  containerId: string,
  path: string,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const req = request({
      socketPath: engine.socketPath,
      ...(engine.agent ? { agent: engine.agent } : {}),
      method: 'GET',
      path: archivePath(engine, containerId, path),
    });
    const onAbort = () => req.destroy(abortReason(signal) as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => signal.removeEventListener('abort', onAbort));
    req.once('error', reject);
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status === 200) return resolve(res);
      refusal(res).then(reject, reject);
    });
    req.end();
  });
}

/** The path of the Engine's archive endpoint for a container and a path in it. */
function archivePath(engine: EngineSocket, containerId: string, path: string): string {
  return `${engine.version ? `/${engine.version}` : ''}/containers/${encodeURIComponent(containerId)}/archive?path=${encodeURIComponent(path)}`;
}

/** An Engine refusal as dockerode reports it: `(HTTP code 404) …` with `statusCode`. */
async function refusal(res: IncomingMessage): Promise<Error> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (keptBytes < REFUSAL_BYTES) kept.push(chunk);
    keptBytes += chunk.length;
  }
  return engineError(res.statusCode ?? 0, Buffer.concat(kept).toString('utf8').slice(0, REFUSAL_BYTES));
}

function engineError(status: number, text: string): Error {
  let message = text.trim();
  try {
    message = String((JSON.parse(text) as { message?: unknown }).message ?? message);
  } catch {}
  return Object.assign(new Error(`(HTTP code ${status}) ${message}`), { statusCode: status });
}
