// Attached processes on the Docker driver: one Engine exec with stdin, stdout and stderr attached over
// a hijacked connection (`Tty: false`: the Engine multiplexes stdout and stderr, 8-byte headers), left
// running for as long as the caller keeps it. The Engine cannot signal an exec, so the program's
// processes carry a marker in their environment (`SVC_EXEC`, as a command's) and `kill` SIGKILLs them.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { DriverComputer } from '../computer.js';
import { attachExec, type InspectContainer, killMarked, runningContainer } from '../docker/exec.js';
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
    private readonly inspect: InspectContainer,
  ) {}

  async start(computer: DriverComputer, request: ProcessRequest): Promise<AttachedProcess> {
    const container = await runningContainer(this.docker, this.inspect, computer, request.signal);
    const marker = randomUUID();
    const { stream } = await attachExec(container, {
      argv: request.argv,
      env: [`SVC_EXEC=${marker}`],
      tty: false,
      signal: request.signal,
    });
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
