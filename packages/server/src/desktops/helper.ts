import type { DriverComputer } from '../computers/computer.js';
import { DriverError } from '../computers/driver.js';
import type { AttachedProcess, ProcessDriver } from '../computers/processes/driver.js';
import type { HelperStep as Step } from './actions.js';
import type { Cursor } from './desktop.js';

/**
 * The desktop helper: a Python program (the desktop image has python3: openbox depends on it) started
 * in a desktop computer by one attached process (one Engine exec) and kept for the computer's next
 * requests, so that a request costs no exec and no process of its own. It holds one connection to
 * the X server on :0 (its abstract socket, as Xvfb listens for a user other than root) and speaks X's
 * protocol itself, with nothing but the standard library: the picture is one `GetImage` of the root
 * window, deflated where it is taken (zlib at level 1: a screenshot is sent at once and thrown away,
 * so speed beats size; the server makes the PNG, pixels.ts), the pointer one `QueryPointer`; moves and buttons are XTEST's `FakeInput`, as
 * xdotool's are; keys and text go to xdotool (its keysym mapping), one run per action.
 *
 * One request a line on stdin, `<seq> <verb> <tokens>`, answered by one line on stdout,
 * `RS <seq> <verb> <fields>` (RS = 0x1e), which for `shot` is followed by the picture's bytes:
 *
 *   shot                         RS seq shot <width> <height> <byte order> <x> <y> zraw <bytes>
 *   input <step> … end <step> …  RS seq input <applied> <x> <y> <failed index or -> <message>
 *   (anything that failed)       RS seq error <message>
 *
 * The pixels are as X has them (32 bits each, in X's byte order). An input step is comma-separated, each part
 * percent-encoded: `m,x,y` (move), `d,b` / `u,b` (button down / up), `w,ms` (wait), `x,arg…` (xdotool
 * with those arguments: it failed when it exits non-zero or complains on stderr, as xdotool only warns
 * of an unknown key); `end` closes an action, and the first step that fails ends the request. X sends
 * events to every client (MappingNotify, when xdotool remaps a key): replies are matched by their
 * request's number, and the rest skipped. The helper first writes `RS ready`, or `RS failed <why>` and
 * exits (no display, no XTEST).
 */
export const HELPER_SCRIPT = String.raw`import os, socket, struct, subprocess, sys, time, zlib
from urllib.parse import unquote_to_bytes
out = sys.stdout.buffer
def say(line):
    out.write(b'\x1e' + line.encode('utf-8', 'replace') + b'\n'); out.flush()
def fail(why):
    say('failed ' + why); sys.exit(1)
d = (os.environ.get('DISPLAY') or ':0').split(':')[-1].split('.')[0] or '0'
x = None
for path in ('\0/tmp/.X11-unix/X' + d, '/tmp/.X11-unix/X' + d):
    try:
        x = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); x.connect(path); break
    except OSError:
        x = None
if x is None: fail('no display')
def rd(n):
    b = bytearray()
    while len(b) < n:
        c = x.recv(min(n - len(b), 1 << 20))
        if not c: fail('display gone')
        b += c
    return bytes(b)
x.sendall(struct.pack('<BxHHHHxx', 0x6c, 11, 0, 0, 0))
ok, _, _, n = struct.unpack('<BxHHH', rd(8))
if ok != 1: fail('display refused')
s = rd(n * 4)
vlen, nformats, byte_order = struct.unpack_from('<16xH3xB', s)[0], s[21], s[22]
at = 32 + ((vlen + 3) & ~3)
bpp = {s[at + 8 * i]: s[at + 8 * i + 1] for i in range(nformats)}
at += 8 * nformats
root, = struct.unpack_from('<I', s, at)
depth = s[at + 38]
# Requests are numbered (16 bits); a reply or an error names its request's number. Events (X sends
# MappingNotify to every client when xdotool remaps a key) and errors of earlier requests are skipped.
sent = 0
def req(b):
    global sent
    x.sendall(b); sent = (sent + 1) & 0xffff; return sent
def reply(want):
    while True:
        r = rd(32); t, code, seq = struct.unpack_from('<BBH', r)
        if t == 1:
            more, = struct.unpack_from('<I', r, 4)
            if more: r += rd(more * 4)
            if seq == want: return r, 0
        elif t == 0 and seq == want: return None, code
def pointer():
    r, _ = reply(req(struct.pack('<BxHI', 38, 2, root)))
    return struct.unpack_from('<hh', r, 16) if r else (-1, -1)
name = b'XTEST'
q, _ = reply(req(struct.pack('<BxHHxx', 98, 2 + ((len(name) + 3) >> 2), len(name)) + name + b'\0' * (-len(name) % 4)))
if not q or not q[8]: fail('the display has no XTEST')
xtest = q[9]
def fake(kind, detail, px=0, py=0):
    req(struct.pack('<BBHBBxxIIxxxxxxxxhhxxxxxxxx', xtest, 2, 9, kind, detail, 0, root if kind == 6 else 0, px, py))
def sync(): reply(req(struct.pack('<BxH', 43, 1)))
say('ready')
for line in sys.stdin.buffer:
    seq, verb, *args = line.decode('utf-8', 'replace').split()
    if verb == 'shot':
        g, _ = reply(req(struct.pack('<BxHI', 14, 2, root)))
        if not g: say(seq + ' error the display did not say its size'); continue
        w, h = struct.unpack_from('<HH', g, 16)
        img, err = reply(req(struct.pack('<BBHIhhHHI', 73, 2, 5, root, 0, 0, w, h, 0xffffffff)))
        if not img or bpp.get(depth) != 32 or len(img) < 32 + w * h * 4:
            say(seq + ' error the display refused the picture (%s)' % err); continue
        px, py = pointer()
        pixels = memoryview(img)[32:32 + w * h * 4]
        body = zlib.compress(pixels, 1); kind = 'zraw'
        say('%s shot %d %d %d %d %d %s %d' % (seq, w, h, byte_order, px, py, kind, len(body)))
        out.write(body); out.flush()
    elif verb == 'input':
        applied, failed, message = 0, '-', ''
        for step in args:
            op, *v = [unquote_to_bytes(p) for p in step.split(',')]
            if op == b'end': applied += 1
            elif op == b'm': fake(6, 0, int(v[0]), int(v[1]))
            elif op == b'd': fake(4, int(v[0]))
            elif op == b'u': fake(5, int(v[0]))
            elif op == b'w': sync(); time.sleep(int(v[0]) / 1000)
            elif op == b'x':
                sync()
                try:
                    done = subprocess.run([b'xdotool', *v], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                    code, err = done.returncode, done.stderr.decode('utf-8', 'replace')
                except OSError as e:
                    code, err = 127, str(e)
                if code or err:
                    failed, message = str(applied), ' '.join((err or 'xdotool exited %d' % code).split())
                    break
        sync()
        px, py = pointer()
        say('%s input %d %d %d %s %s' % (seq, applied, px, py, failed, message[:1000]))
    else:
        say(seq + ' error unknown request')
`;

const RS = 0x1e;
const NL = 0x0a;
/** The longest answer line the helper writes (an input's message is cut at 1000 characters). */
const MAX_LINE = 4096;
/** How long a new helper has to say it is ready. */
const READY_TIMEOUT_MS = 5_000;

/** What a `shot` answers: the screen's pixels as X has them (deflated), and the pointer. */
export interface RawShot {
  /** The pixels, 32 bits each, deflated (zlib). */
  body: Buffer;
  width: number;
  height: number;
  /** X's image byte order: 0 least significant byte first (B, G, R, unused), 1 most. */
  byteOrder: number;
  cursor: Cursor;
}

/** What an `input` answers. */
export interface HelperInput {
  applied: number;
  cursor: Cursor;
  failed?: { index: number; message: string };
}

function stepToken(step: Step): string {
  const parts =
    step.op === 'm'
      ? [step.x, step.y]
      : step.op === 'w'
        ? [step.ms]
        : step.op === 'x'
          ? step.args
          : [step.button];
  return [step.op, ...parts.map((part) => encodeURIComponent(String(part)))].join(',');
}

interface Pending {
  seq: number;
  resolve(answer: { fields: string[]; pixels?: Buffer }): void;
  reject(error: Error): void;
}

/**
 * One helper in one computer: one request at a time (callers queue), each with a deadline that
 * counts its wait in the queue. A helper that breaks the protocol, misses a deadline or goes away is
 * killed, and the request it holds fails `unavailable`; the next request starts a new one.
 *
 * @example
 * const helper = await DesktopHelper.start(driver.processes, computer, 64 * 1024 * 1024);
 * const shot = await helper.shot(10_000, signal);
 */
export class DesktopHelper {
  private seq = 0;
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The `shot` line whose pixels are being read, and how many bytes they are. */
  private reading: { fields: string[]; bytes: number } | undefined;
  private ready: ((ok: boolean) => void) | undefined;
  /** Why the helper would not start, in its words (no display yet, no XTEST). */
  private refused: string | undefined;

  private constructor(
    private readonly process: AttachedProcess,
    private readonly maxBytes: number,
  ) {
    process.onStdout((bytes) => this.take(bytes));
    process.onExit(() => this.fail(new Error('the desktop helper ended')));
  }

  /** Starts a helper in `computer` and waits until it says it is ready (bounded). */
  static async start(
    processes: ProcessDriver,
    computer: DriverComputer,
    maxBytes: number,
  ): Promise<DesktopHelper> {
    const process = await processes.start(computer, {
      argv: ['python3', '-c', HELPER_SCRIPT],
      signal: AbortSignal.timeout(READY_TIMEOUT_MS),
    });
    const helper = new DesktopHelper(process, maxBytes);
    const ok = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
      helper.ready = (value) => {
        clearTimeout(timer);
        resolve(value);
      };
      if (!process.alive) helper.ready(false);
    });
    helper.ready = undefined;
    if (!ok) {
      process.kill();
      // It ran and found no screen (a computer that has just started): the screen is not up yet.
      if (helper.refused)
        throw new DriverError(
          'unavailable',
          `the computer's screen is not ready (${helper.refused}); retry shortly`,
          {
            reason: 'screen_not_ready',
          },
        );
      throw new DriverError('unavailable', 'the desktop helper did not start in the computer', {
        reason: 'helper_not_ready',
      });
    }
    return helper;
  }

  get alive(): boolean {
    return this.process.alive;
  }

  kill(): void {
    this.fail(new Error('the desktop helper was stopped'));
  }

  /** The screen's pixels and the pointer. */
  async shot(timeoutMs: number, signal: AbortSignal): Promise<RawShot> {
    const { fields, pixels } = await this.request('shot', [], timeoutMs, signal);
    const [width, height, byteOrder, x, y] = fields.slice(0, 5).map(Number);
    const kind = fields[5];
    if (
      fields[0] === 'error' ||
      !pixels ||
      !width ||
      !height ||
      kind !== 'zraw' ||
      ![byteOrder, x, y].every(Number.isSafeInteger)
    )
      throw new DriverError('unavailable', 'the computer could not take a screenshot; retry shortly', {
        said: fields.join(' ').slice(0, 500),
      });
    return {
      body: pixels,
      width,
      height,
      byteOrder: byteOrder as number,
      cursor: { x: x as number, y: y as number },
    };
  }

  /** The actions' steps, in order, up to the first that fails. */
  async input(actions: readonly Step[][], timeoutMs: number, signal: AbortSignal): Promise<HelperInput> {
    const tokens = actions.flatMap((steps) => [...steps.map(stepToken), 'end']);
    const { fields } = await this.request('input', tokens, timeoutMs, signal);
    const [applied, x, y, failed] = fields;
    const cursor = { x: Number(x), y: Number(y) };
    if (
      fields[0] === 'error' ||
      fields.length < 4 ||
      !Number.isSafeInteger(cursor.x) ||
      !Number.isSafeInteger(cursor.y)
    )
      throw new DriverError('unavailable', 'the computer could not take the input; retry shortly', {
        said: fields.join(' ').slice(0, 500),
      });
    return {
      applied: Number(applied),
      cursor,
      ...(failed === '-'
        ? {}
        : {
            failed: {
              index: Number(failed),
              message: fields.slice(4).join(' ').trim() || 'the action failed',
            },
          }),
    };
  }

  /**
   * Sends one request once those before it are answered, and waits for its answer: the fields after
   * the verb (`error` first when it failed), and the pixels after a `shot`. The deadline runs from the
   * call: a request aborted or out of time while it waits is never sent; one out of time while the
   * helper works on it kills the helper (it is stuck, or the display is).
   */
  private request(
    verb: string,
    tokens: string[],
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ fields: string[]; pixels?: Buffer }> {
    const deadline = performance.now() + timeoutMs;
    const turn = this.queue.then(() => {
      const left = deadline - performance.now();
      if (signal.aborted) throw new DriverError('unavailable', 'the request was aborted');
      if (left <= 0 || !this.alive)
        throw new DriverError('unavailable', "the computer's desktop is busy or gone; retry shortly", {
          reason: left <= 0 ? 'helper_busy' : 'helper_gone',
        });
      const seq = ++this.seq;
      return new Promise<{ fields: string[]; pixels?: Buffer }>((resolve, reject) => {
        const timer = setTimeout(
          () => this.fail(new Error('the desktop helper did not answer in time')),
          left,
        );
        this.pending = {
          seq,
          resolve: (answer) => {
            clearTimeout(timer);
            this.pending = undefined;
            resolve(answer);
          },
          reject: (error) => {
            clearTimeout(timer);
            this.pending = undefined;
            reject(
              new DriverError('unavailable', "the computer's desktop did not answer; retry shortly", {
                reason: error.message,
              }),
            );
          },
        };
        this.process.write(`${seq} ${verb}${tokens.map((token) => ` ${token}`).join('')}\n`);
      });
    });
    this.queue = turn.catch(() => {});
    return turn;
  }

  /** Fails what waits and kills the process: it said something out of turn, or went away. */
  private fail(error: Error): void {
    this.ready?.(false);
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(error);
    if (this.process.alive) this.process.kill();
  }

  private take(bytes: Buffer): void {
    this.held.push(bytes);
    this.heldBytes += bytes.length;
    try {
      while (this.step()) {}
    } catch (error) {
      this.fail(error as Error);
    }
  }

  /** Reads one thing from what is held (a line, a picture's pixels); false when more bytes are needed. */
  private step(): boolean {
    const reading = this.reading;
    if (reading) {
      if (this.heldBytes < reading.bytes) return false;
      const pixels = this.takeBytes(reading.bytes);
      this.reading = undefined;
      this.pending?.resolve({ fields: reading.fields, pixels });
      return true;
    }
    if (this.heldBytes === 0) return false;
    const all = this.joined();
    const end = all.indexOf(NL);
    if (end < 0) {
      if (all.length > MAX_LINE) throw new Error('the desktop helper wrote a line too long');
      return false;
    }
    if (all[0] !== RS) throw new Error('the desktop helper wrote something out of turn');
    const fields = this.takeBytes(end + 1)
      .subarray(1, end)
      .toString('utf8')
      .split(' ');
    if (fields[0] === 'ready' && this.ready) {
      this.ready(true);
      return true;
    }
    if (fields[0] === 'failed' && this.ready) {
      this.refused = fields.slice(1).join(' ');
      this.ready(false);
      return true;
    }
    const pending = this.pending;
    if (!pending || fields[0] !== String(pending.seq))
      throw new Error('the desktop helper answered out of turn');
    if (fields[1] === 'shot') {
      const bytes = Number(fields.at(-1));
      if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > this.maxBytes)
        throw new Error('the screenshot is larger than allowed');
      this.reading = { fields: fields.slice(2, -1), bytes };
      return true;
    }
    pending.resolve({ fields: fields[1] === 'error' ? ['error', ...fields.slice(2)] : fields.slice(2) });
    return true;
  }

  /** What is held, as one buffer. */
  private joined(): Buffer {
    if (this.held.length !== 1) this.held = [Buffer.concat(this.held)];
    return this.held[0] ?? Buffer.alloc(0);
  }

  /** The first `bytes` held (joined once), the rest kept. */
  private takeBytes(bytes: number): Buffer {
    const all = this.joined();
    const taken = all.subarray(0, bytes);
    const rest = all.subarray(bytes);
    this.held = rest.length ? [rest] : [];
    this.heldBytes = rest.length;
    return taken;
  }
}
