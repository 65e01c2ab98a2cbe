// Terminals on the Docker driver (design §17): a real PTY, the Engine's exec with `Tty: true`, attached
// over a hijacked connection on the Engine's socket (`POST /exec/{id}/start` with `Tty: true`: one raw
// stream each way, no multiplexing); `POST /exec/{id}/resize?h=&w=` for a resize; the exit code from
// `GET /exec/{id}/json` once the stream has ended. The Engine cannot signal an exec, so the program's
// processes carry a marker in their environment and a hang-up signals them (HUP, then KILL).
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { DriverComputer } from '../computer.js';
import { attachExec, type InspectContainer, runDetached, runningContainer } from '../docker/exec.js';
import { HANGUP_GRACE_MS } from './constants.js';
import { Listeners, type Pty, type PtyRequest, type TerminalDriver } from './driver.js';

/** The environment variable that marks a terminal's processes (its value is the terminal's marker). */
const MARKER = 'SVC_TERMINAL';

/** The login shell of the computer's user, by image: bash where the image has it. */
export function loginShell(image: string): string[] {
  return image.startsWith('busybox') ? ['/bin/sh', '-l'] : ['/bin/bash', '-l'];
}

/**
 * Signals every process of the container whose environment holds `SVC_TERMINAL=<marker>`.
 *
 * @example
 * await signalMarked(container, marker, 'HUP');
 */
async function signalMarked(
  container: Docker.Container,
  marker: string,
  signal: 'HUP' | 'KILL',
): Promise<void> {
  const script = `for p in /proc/[0-9]*; do tr '\\0' '\\n' < "$p/environ" 2>/dev/null | grep -qx "${MARKER}=$0" && kill -${signal} "\${p#/proc/}"; done; true`;
  await runDetached(container, ['/bin/sh', '-c', script, marker]).catch(() => {});
}

/**
 * The Docker driver's terminals. `container` finds a computer's running container (checked ours).
 *
 * @example
 * const terminals = new DockerTerminals(docker, (computer, signal) => driver.inspect(computer, signal));
 */
export class DockerTerminals implements TerminalDriver {
  constructor(
    private readonly docker: Docker,
    private readonly inspect: InspectContainer,
  ) {}

  async open(computer: DriverComputer, request: PtyRequest): Promise<Pty> {
    const container = await runningContainer(this.docker, this.inspect, computer, request.signal);
    const command = request.command ?? loginShell(computer.image);
    const marker = randomUUID();
    const { exec, stream } = await attachExec(container, {
      argv: command,
      env: [...Object.entries(request.env).map(([k, v]) => `${k}=${v}`), `${MARKER}=${marker}`],
      cwd: request.cwd,
      tty: true,
      signal: request.signal,
    });
    const pty = new DockerPty(command, exec, container, marker, stream);
    await exec.resize({ h: request.rows, w: request.cols }).catch(() => {});
    return pty;
  }
}

class DockerPty implements Pty {
  readonly #data = new Listeners<Uint8Array>();
  readonly #exit = new Listeners<number | undefined>();
  #pending: Uint8Array[] = [];
  #listening = false;
  #ended = false;
  #code: number | undefined;
  #exited = false;

  constructor(
    readonly command: string[],
    private readonly exec: Docker.Exec,
    private readonly container: Docker.Container,
    private readonly marker: string,
    private readonly stream: Duplex,
  ) {
    // Every way the stream can go is heard here, where it is made: nothing a program does may crash
    // the server, and nothing waits on a stream that is gone.
    stream.on('data', (chunk: Buffer) => {
      const bytes = new Uint8Array(chunk);
      if (this.#listening) this.#data.emit(bytes);
      else this.#pending.push(bytes);
    });
    stream.on('error', () => this.#finish());
    stream.once('end', () => this.#finish());
    stream.once('close', () => this.#finish());
  }

  onData(listener: (bytes: Uint8Array) => void): void {
    this.#data.add(listener);
    if (!this.#listening) {
      this.#listening = true;
      for (const bytes of this.#pending.splice(0)) this.#data.emit(bytes);
    }
  }

  onExit(listener: (exitCode: number | undefined) => void): void {
    this.#exit.add(listener);
    if (this.#exited) listener(this.#code);
  }

  write(bytes: Uint8Array): void {
    if (this.#ended || this.stream.destroyed) return;
    this.stream.write(Buffer.from(bytes));
  }

  resize(cols: number, rows: number): void {
    if (this.#ended) return;
    void this.exec.resize({ h: rows, w: cols }).catch(() => {});
  }

  pause(): void {
    if (!this.#ended) this.stream.pause();
  }

  resume(): void {
    if (!this.#ended) this.stream.resume();
  }

  hangup(): void {
    if (this.#ended) return;
    // A paused stream would hold the program's last writes, and its end, back.
    this.stream.resume();
    void signalMarked(this.container, this.marker, 'HUP');
    const timer = setTimeout(() => {
      if (this.#ended) return;
      void signalMarked(this.container, this.marker, 'KILL').finally(() => this.stream.destroy());
    }, HANGUP_GRACE_MS);
    timer.unref();
  }

  /** The stream ended: the program is gone; its exit code is the Engine's, once it has recorded it. */
  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    void (async () => {
      let code: number | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        const info = await this.exec.inspect().catch(() => undefined);
        if (!info) break;
        if (!info.Running) {
          code = info.ExitCode ?? undefined;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      this.#code = code;
      this.#exited = true;
      this.#exit.emit(code);
    })();
  }
}
