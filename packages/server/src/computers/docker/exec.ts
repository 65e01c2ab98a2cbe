import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import type { DriverComputer } from '../computer.js';
import { DriverError, type ExecRequest, type ExecResult } from '../driver.js';

/** The environment variable that marks an exec's processes, so a timeout can find and kill them. */
const MARKER = 'SVC_EXEC';

/**
 * Keeps the first `limit` bytes written to it and notes whether more came; hands what it keeps to
 * `onKept` as it arrives (the command's output log).
 */
export class CappedSink extends Writable {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(
    private readonly limit: number,
    private readonly onKept?: (bytes: Uint8Array) => void,
  ) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.take(chunk);
    done();
  }

  /** Keeps what fits of `chunk` (the Writable's `_write`, callable directly). */
  take(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (chunk.length > room) this.truncated = true;
    if (room > 0) {
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(kept);
      this.size += kept.length;
      this.onKept?.(new Uint8Array(kept.buffer, kept.byteOffset, kept.length));
    }
  }

  bytes(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.chunks));
  }
}

/**
 * Runs `request.argv` in a running container with the Engine's exec API: stdout and stderr demuxed and
 * each capped at `maxOutputBytes` (each demuxed chunk handed to `onOutput` as it arrives), `stdin`
 * written then closed. Three round trips to the Engine: create,
 * the hijacked start (output and its end on one connection), and an inspect for the exit code. The
 * Engine has no call to kill an exec, so the command carries a marker in its environment
 * (`SVC_EXEC=<uuid>`, inherited by whatever it starts) and on timeout or abort a second exec SIGKILLs
 * every process of the container whose environment holds it. Images therefore need `/bin/sh`, `tr`,
 * `grep` and `kill` (busybox has them); nothing is written to the container's disk.
 *
 * @example
 * const result = await runExec(docker, container, { argv: ['id'], timeoutMs: 5000, maxOutputBytes: 65536, signal });
 */
export async function runExec(
  docker: Docker,
  container: Docker.Container,
  request: ExecRequest,
): Promise<ExecResult> {
  const marker = randomUUID();
  const withStdin = request.stdin !== undefined;
  const exec = await container.exec({
    // Through `/bin/sh` so that a program that is not there exits 127, as in a shell.
    Cmd: ['/bin/sh', '-c', 'exec "$@"', 'sh', ...request.argv],
    Env: [`${MARKER}=${marker}`],
    AttachStdin: withStdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    abortSignal: request.signal,
  });
  const stream = (await exec.start({ hijack: true, stdin: withStdin })) as Duplex;
  const { onOutput } = request;
  const stdout = new CappedSink(request.maxOutputBytes, onOutput && ((bytes) => onOutput('stdout', bytes)));
  const stderr = new CappedSink(request.maxOutputBytes, onOutput && ((bytes) => onOutput('stderr', bytes)));
  docker.modem.demuxStream(stream, stdout, stderr);
  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  let timedOut = false;
  let killed: Promise<void> | undefined;
  const kill = () => {
    killed ??= killMarked(container, marker).finally(() => stream.destroy());
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, request.timeoutMs);
  request.signal.addEventListener('abort', kill, { once: true });
  try {
    if (withStdin) stream.end(Buffer.from(request.stdin as Uint8Array));
    await ended;
    await killed;
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', kill);
  }
  const info = await waitForExit(exec);
  return {
    exitCode: info.ExitCode ?? (timedOut || killed ? 137 : -1),
    stdout: stdout.bytes(),
    stderr: stderr.bytes(),
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    timedOut,
  };
}

async function waitForExit(exec: Docker.Exec): Promise<Docker.ExecInspectInfo> {
  // The stream can end a moment before the Engine records the exit code.
  for (let attempt = 0; ; attempt++) {
    const info = await exec.inspect();
    if (!info.Running || attempt >= 50) return info;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** SIGKILLs every process of the container whose environment holds `SVC_EXEC=<marker>`. */
export async function killMarked(container: Docker.Container, marker: string): Promise<void> {
  const script = `for p in /proc/[0-9]*; do tr '\\0' '\\n' < "$p/environ" 2>/dev/null | grep -qx "${MARKER}=$0" && kill -KILL "\${p#/proc/}"; done; true`;
  await runDetached(container, ['/bin/sh', '-c', script, marker]).catch(() => {});
}

export async function runDetached(container: Docker.Container, cmd: string[]): Promise<void> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: false, AttachStderr: false });
  // The Engine keeps a detached start's connection open while the process runs (or, seen with Debian's
  // dash, until the container stops): closed here, or it holds a socket and the event loop that long.
  const answer = (await exec.start({ Detach: true })) as unknown as { destroy?: () => void } | undefined;
  try {
    await waitForExit(exec);
  } finally {
    answer?.destroy?.();
  }
}

/** Finds a computer's running container (the driver's inspect, checked ours); `undefined`: none. */
export type InspectContainer = (
  computer: DriverComputer,
  signal: AbortSignal,
) => Promise<{ Id: string; State: { Running: boolean } } | undefined>;

/**
 * The computer's running container, or 409 `invalid_state` (a `DriverError`) when it has none.
 *
 * @example
 * const container = await runningContainer(docker, inspect, computer, signal);
 */
export async function runningContainer(
  docker: Docker,
  inspect: InspectContainer,
  computer: DriverComputer,
  signal: AbortSignal,
): Promise<Docker.Container> {
  const info = await inspect(computer, signal);
  if (!info?.State.Running)
    throw new DriverError('invalid_state', `computer ${computer.name} has no running container`, {
      details: { current_state: 'stopped', allowed_from: ['running'] },
    });
  return docker.getContainer(info.Id);
}

/**
 * Starts `argv` in the container with stdin, stdout and stderr attached over a hijacked connection,
 * through `/bin/sh -c 'exec "$@"'` (so a program that is not there ends with 127, as in a shell): with
 * `tty`, one raw stream each way (a PTY); without, the Engine's multiplexed stdout and stderr.
 *
 * @example
 * const { exec, stream } = await attachExec(container, { argv: ['python3'], env: ['SVC_EXEC=1'], tty: false, signal });
 */
export async function attachExec(
  container: Docker.Container,
  request: {
    argv: readonly string[];
    env: string[];
    cwd?: string | undefined;
    tty: boolean;
    signal: AbortSignal;
  },
): Promise<{ exec: Docker.Exec; stream: Duplex }> {
  const exec = await container.exec({
    Cmd: ['/bin/sh', '-c', 'exec "$@"', 'sh', ...request.argv],
    Env: request.env,
    ...(request.cwd ? { WorkingDir: request.cwd } : {}),
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: request.tty,
    abortSignal: request.signal,
  });
  const stream = (await exec.start({
    hijack: true,
    stdin: true,
    ...(request.tty ? { Tty: true } : {}),
  })) as Duplex;
  return { exec, stream };
}
