// SIMULATED terminals (design §17): what the simulated driver opens on a "PTY". A line discipline as
// a TTY in canonical mode has one — input echoed, CR read as a newline and written as CRLF, backspace,
// Ctrl-C, Ctrl-D — in front of a tiny shell: `echo …`, `exit [N]`, `stty size`, `printf`-free. Enough
// for the mock, the kit and the contract suite to drive every operation without Docker.
import type { DriverComputer } from '../computer.js';
import { Listeners, type Pty, type PtyRequest, type TerminalDriver } from './driver.js';

const PROMPT = '$ ';
const encoder = new TextEncoder();
/** SIGHUP's exit status as a shell reports it (128 + 1). */
const HANGUP_STATUS = 129;

/**
 * The simulated driver's terminals.
 *
 * @example
 * const pty = await new SimulatedTerminals().open(computer, { command: undefined, cwd: undefined, env: {}, cols: 80, rows: 24, signal });
 * pty.write(new TextEncoder().encode('echo hi\r')); // writes "echo hi\r\nhi\r\n$ "
 */
export class SimulatedTerminals implements TerminalDriver {
  async open(_computer: DriverComputer, request: PtyRequest): Promise<Pty> {
    return new SimulatedPty(request);
  }
}

class SimulatedPty implements Pty {
  readonly command: string[];
  readonly #data = new Listeners<Uint8Array>();
  readonly #exit = new Listeners<number | undefined>();
  #line: number[] = [];
  #cols: number;
  #rows: number;
  #ended = false;
  /** What is written before anyone listens (the first prompt) waits here. */
  #pending: Uint8Array[] = [];
  #listening = false;
  /** Paused by the reader's side: what is written waits in `#pending`. */
  #paused = false;

  constructor(request: PtyRequest) {
    this.command = request.command ?? ['/bin/sh', '-l'];
    this.#cols = request.cols;
    this.#rows = request.rows;
    const program = this.command[0]?.split('/').at(-1);
    // Only the shell is simulated: another program "starts", says so and waits for input all the same.
    if (program !== 'sh' && program !== 'bash')
      this.#out(`${this.command.join(' ')}: simulated (a shell stands in for it)\r\n`);
    this.#out(PROMPT);
  }

  onData(listener: (bytes: Uint8Array) => void): void {
    this.#data.add(listener);
    if (!this.#listening) {
      this.#listening = true;
      this.#release();
    }
  }

  /** Hands over what waited, unless paused or nobody listens yet. */
  #release(): void {
    // One at a time: a listener may pause it again (a reader fell behind once more).
    while (this.#listening && !this.#paused && this.#pending.length > 0)
      this.#data.emit(this.#pending.shift() as Uint8Array);
  }

  onExit(listener: (exitCode: number | undefined) => void): void {
    this.#exit.add(listener);
  }

  write(bytes: Uint8Array): void {
    if (this.#ended) return;
    for (const byte of bytes) {
      if (this.#ended) return;
      if (byte === 0x0d || byte === 0x0a) {
        this.#out('\r\n');
        const line = Buffer.from(this.#line);
        this.#line = [];
        this.#run(line);
      } else if (byte === 0x7f || byte === 0x08) {
        if (this.#line.length > 0) {
          this.#line.pop();
          this.#out('\b \b');
        }
      } else if (byte === 0x03) {
        this.#line = [];
        this.#out(`^C\r\n${PROMPT}`);
      } else if (byte === 0x04) {
        if (this.#line.length === 0) this.#end(0);
      } else {
        this.#line.push(byte);
        this.#emit(Uint8Array.of(byte));
      }
    }
  }

  resize(cols: number, rows: number): void {
    this.#cols = cols;
    this.#rows = rows;
  }

  hangup(): void {
    this.#end(HANGUP_STATUS);
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#release();
  }

  /** Runs one line of the tiny shell; its words are bytes (what is not UTF-8 is echoed as it came). */
  #run(line: Buffer): void {
    const text = line.toString('latin1').trim();
    const [word, ...rest] = text.split(/\s+/);
    if (word === undefined || word === '') {
      this.#out(PROMPT);
      return;
    }
    if (word === 'exit') {
      const code = rest[0] === undefined ? 0 : Number(rest[0]);
      this.#end(Number.isInteger(code) ? code & 0xff : 2);
      return;
    }
    if (word === 'echo') {
      const start = line.indexOf('echo') + 5;
      this.#emit(Buffer.concat([line.subarray(Math.min(start, line.length)), Buffer.from('\r\n')]));
    } else if (word === 'stty' && rest[0] === 'size') {
      this.#out(`${this.#rows} ${this.#cols}\r\n`);
    } else {
      this.#out(`sh: ${word}: not found (simulated driver)\r\n`);
    }
    this.#out(PROMPT);
  }

  #out(text: string): void {
    this.#emit(encoder.encode(text));
  }

  #emit(bytes: Uint8Array): void {
    if (this.#listening && !this.#paused) this.#data.emit(bytes);
    else this.#pending.push(bytes);
  }

  #end(code: number): void {
    if (this.#ended) return;
    this.#ended = true;
    // The end comes after everything written: what a pause held goes first.
    if (this.#listening) for (const bytes of this.#pending.splice(0)) this.#data.emit(bytes);
    this.#exit.emit(code);
  }
}
