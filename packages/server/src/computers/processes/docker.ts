// Attached processes on the Docker driver: one Engine exec with stdin, stdout and stderr attached over
// a hijacked connection (`Tty: false`: the Engine multiplexes stdout and stderr, 8-byte headers), left
// running for as long as the caller keeps it. The Engine cannot signal an exec, so the program's
// processes carry a marker in their environment (`SVC_EXEC`, as a command's) and `kill` SIGKILLs them.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { DriverComputer } from '../computer.js';
import { killMarked } from '../docker/exec.js';
import { DriverError } from '../driver.js';
import { Listeners } from '../terminals/driver.js';
import type { AttachedProcess, ProcessDriver, ProcessRequest } from './driver.js';

/**
 * The Docker driver's attached processes. `inspect` finds a computer's running container (checked ours).
 *
 * @example
 * const processes = new DockerProcesses(docker, (computer, signal) => driver.inspect(computer, signal));
 */
export class DockerProcesses implements ProcessDriver {
  constructor(
    private readonly docker: Docker,
    private readonly inspect: (
      computer: DriverComputer,
      signal: AbortSignal,
    ) => Promise<{ Id: string; State: { Running: boolean } } | undefined>,
  ) {}

  async start(computer: DriverComputer, request: ProcessRequest): Promise<AttachedProcess> {
    const info = await this.inspect(computer, request.signal);
    if (!info?.State.Running)
      throw new DriverError('invalid_state', `computer ${computer.name} has no running container`, {
        details: { current_state: 'stopped', allowed_from: ['running'] },
      });
    const container = this.docker.getContainer(info.Id);
    const marker = randomUUID();
    const exec = await container.exec({
      Cmd: ['/bin/sh', '-c', 'exec "$@"', 'sh', ...request.argv],
      Env: [`SVC_EXEC=${marker}`],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      abortSignal: request.signal,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    return new DockerProcess(container, marker, stream);
  }
}

class DockerProcess implements AttachedProcess {
  readonly #stdout = new Listeners<Buffer>();
  readonly #stderr = new Listeners<Buffer>();
  readonly #exit = new Listeners<void>();
  #pending: Buffer = Buffer.alloc(0);
  #alive = true;

  constructor(
    private readonly container: Docker.Container,
    private readonly marker: string,
    private readonly stream: Duplex,
  ) {
    // Every way the stream can go is heard here, where it is made: nothing the program does may
    // crash the server. Unref'd: an idle helper never keeps the server's process alive.
    stream.on('data', (chunk: Buffer) => this.#demux(chunk));
    stream.on('error', () => this.#end());
    stream.once('end', () => this.#end());
    stream.once('close', () => this.#end());
    (stream as Duplex & { unref?: () => void }).unref?.();
  }

  get alive(): boolean {
    return this.#alive;
  }

  write(bytes: Uint8Array | string): void {
    if (!this.#alive || this.stream.destroyed) return;
    this.stream.write(typeof bytes === 'string' ? bytes : Buffer.from(bytes));
  }

  onStdout(listener: (bytes: Buffer) => void): void {
    this.#stdout.add(listener);
  }

  onStderr(listener: (bytes: Buffer) => void): void {
    this.#stderr.add(listener);
  }

  onExit(listener: () => void): void {
    if (this.#alive) this.#exit.add(listener);
    else listener();
  }

  kill(): void {
    const wasAlive = this.#alive;
    this.stream.destroy();
    this.#end();
    if (wasAlive) void killMarked(this.container, this.marker);
  }

  /** The Engine's multiplexed stream: an 8-byte header (stream, 0, 0, 0, length) before each payload. */
  #demux(chunk: Buffer): void {
    let buf = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    while (buf.length >= 8) {
      const length = buf.readUInt32BE(4);
      if (buf.length < 8 + length) break;
      const payload = buf.subarray(8, 8 + length);
      if (buf[0] === 1) this.#stdout.emit(payload);
      else if (buf[0] === 2) this.#stderr.emit(payload);
      buf = buf.subarray(8 + length);
    }
    this.#pending = buf.length ? Buffer.from(buf) : Buffer.alloc(0);
  }

  #end(): void {
    if (!this.#alive) return;
    this.#alive = false;
    this.#exit.emit();
  }
}
