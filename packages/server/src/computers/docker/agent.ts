import { randomBytes, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { ExecRequest, ExecResult } from '../driver.js';
import { CappedSink, killMarked } from './exec.js';

/**
 * The exec agent: a busybox-compatible shell loop started in a computer by one Engine exec, whose
 * attached stdin takes one command a line and whose stdout and stderr carry the commands' output, so
 * that later commands skip the Engine's exec (create, containerd and runc starting a process, inspect).
 *
 * A request is `<token> <kill marker> <argv, each single-quoted>\n`; a newline inside an argument is
 * sent as `'"$N"'` (N holds a newline), so a request is one line. For each, the agent writes
 * `RS <token> +\n` (RS = 0x1e) on stdout before it starts the command: the command has started (a
 * request the agent never acknowledged never ran). It runs the command as the Engine exec would:
 * `/bin/sh -c 'exec "$@"'` with the marker in `SVC_EXEC` (so a timeout kills it and what it started),
 * `SHLVL` as an exec's, stdin from /dev/null, its stdout and stderr through a pipe each to `cat`, so it
 * is done when every process holding them has closed them (as the Engine's exec stream ends), and the
 * shell's own job messages ("Killed") go nowhere. Then `RS <token> <exit code>\n` on stdout and on
 * stderr: each stream's end. The token is random per command and never shown to the command.
 */
const AGENT_SCRIPT = `set -o pipefail
N='
'
r() { export SVC_EXEC="$k" SHLVL=0; exec /bin/sh -c 'exec "$@"' sh "$@"; }
printf '\\036agent ready\\n'
while IFS= read -r l; do
t=\${l%% *}; l=\${l#* }; k=\${l%% *}; l=\${l#* }
eval "set -- $l"
printf '\\036%s +\\n' "$t"
{ { (r "$@") </dev/null 2>&1 1>&3 3>&- 4>&- | cat 1>&4 3>&- 4>&-; } 3>&1 4>&2 2>/dev/null | cat; }
c=$?
printf '\\036%s %s\\n' "$t" "$c"
printf '\\036%s %s\\n' "$t" "$c" >&2
done
`;

const RS = 0x1e;
/** The longest field of an agent line: an exit code, or `+`. */
const MAX_FIELD = 8;
const NL = 0x0a;
const READY = Buffer.from('\x1eagent ready\n');
/** How long an agent has to say it is ready. */
const READY_TIMEOUT_MS = 5_000;
/** After a timeout's kill, how long the agent has to report the command's end before it is dropped. */
const KILL_REPORT_MS = 5_000;

/** The agent cannot take this command (gone, busy, or the command has what a line cannot carry). */
export class AgentUnavailable extends Error {}

/** One argument, single-quoted for the agent's `eval "set -- …"`. */
function quote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`).replaceAll('\n', `'"$N"'`)}'`;
}

/**
 * Splits one output stream of the agent into the command's bytes and the agent's lines
 * `RS <token> <field>\n`, holding back a chunk's tail only when it could be the start of such a line.
 */
export class LineScanner {
  private held: Buffer = Buffer.alloc(0);
  private readonly prefix: Buffer;

  constructor(token: string) {
    this.prefix = Buffer.from(`\x1e${token} `);
  }

  /** Feeds `chunk`; calls `output` with the command's bytes and `field` with each agent line's field. */
  push(chunk: Buffer, output: (bytes: Buffer) => void, field: (value: string) => void): void {
    let buf = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = Buffer.alloc(0);
    for (;;) {
      const at = buf.indexOf(this.prefix);
      if (at < 0) {
        const hold = this.partialAt(buf);
        if (hold > 0) output(buf.subarray(0, hold));
        if (hold < buf.length) this.held = Buffer.from(buf.subarray(hold));
        return;
      }
      const end = buf.indexOf(NL, at + this.prefix.length);
      if (end < 0) {
        if (at > 0) output(buf.subarray(0, at));
        if (buf.length - at > this.prefix.length + MAX_FIELD) {
          // Not a line of the agent's: bounded, told as an empty field (the caller drops the agent).
          field('');
          output(buf.subarray(at));
        } else this.held = Buffer.from(buf.subarray(at));
        return;
      }
      if (at > 0) output(buf.subarray(0, at));
      field(buf.subarray(at + this.prefix.length, end).toString('latin1'));
      buf = buf.subarray(end + 1);
      if (!buf.length) return;
    }
  }

  /** Where a possible start of an agent line begins in `buf`'s tail; `buf.length` when it has none. */
  private partialAt(buf: Buffer): number {
    // The prefix holds one RS, at its start: a partial line can only begin at the last RS.
    const at = buf.lastIndexOf(RS);
    if (at < 0 || buf.length - at >= this.prefix.length) return buf.length;
    return this.prefix.subarray(0, buf.length - at).equals(buf.subarray(at)) ? at : buf.length;
  }
}

interface Job {
  out: LineScanner;
  err: LineScanner;
  stdout: CappedSink;
  stderr: CappedSink;
  acked: boolean;
  outCode?: number;
  errCode?: number;
  finish: (outcome: { code?: number; gone?: boolean }) => void;
}

/**
 * One agent in one container: one command at a time. Its connection is unref'd, so an idle agent
 * never keeps the process alive; it ends with the container, or when the connection closes (the
 * agent reads the end of its stdin and exits).
 */
export class ExecAgent {
  private job: Job | undefined;
  private alive = true;
  /** Bytes the agent wrote where none were expected: it is dropped after its command. */
  private strayed = false;
  private readonly closeListeners: (() => void)[] = [];
  private pending = Buffer.alloc(0);
  private readyWait: ((ready: boolean) => void) | undefined;
  private readyBytes = Buffer.alloc(0);

  private constructor(
    private readonly container: Docker.Container,
    private readonly stream: Duplex,
  ) {
    stream.on('data', (chunk: Buffer) => this.demux(chunk));
    const gone = () => this.gone();
    stream.once('end', gone);
    stream.once('close', gone);
    stream.once('error', gone);
    (stream as Duplex & { unref?: () => void }).unref?.();
  }

  /**
   * Starts an agent in `container` (one Engine exec, left running) and waits until it is ready.
   *
   * @example
   * const agent = await ExecAgent.start(docker.getContainer(id));
   */
  static async start(container: Docker.Container): Promise<ExecAgent> {
    const exec = await container.exec({
      Cmd: ['/bin/sh', '-c', AGENT_SCRIPT, 'exec-agent'],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    const agent = new ExecAgent(container, stream);
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
      agent.readyWait = (value) => {
        clearTimeout(timer);
        resolve(value);
      };
      if (!agent.alive) agent.readyWait(false);
    });
    agent.readyWait = undefined;
    if (!ready) {
      agent.close();
      throw new Error('the exec agent did not start');
    }
    return agent;
  }

  /** Whether a command can be handed to it now. */
  get idle(): boolean {
    return this.alive && !this.job && !this.strayed;
  }

  /** Called once when the agent is gone. */
  onClose(listener: () => void): void {
    if (this.alive) this.closeListeners.push(listener);
    else listener();
  }

  close(): void {
    this.stream.destroy();
    this.gone();
  }

  /**
   * Runs one command, with the semantics of the Engine exec path (`runExec`): each stream capped at
   * `maxOutputBytes` and handed to `onOutput` as it comes, a timeout or an abort kills the marked
   * processes through the Engine and reports exit code 137. Throws `AgentUnavailable`, having run
   * nothing, when the agent is busy or gone, the request has stdin, an argument holds a NUL, or the
   * request is aborted already: the caller then uses the Engine's exec.
   */
  async run(request: ExecRequest): Promise<ExecResult> {
    if (
      !this.idle ||
      request.stdin !== undefined ||
      request.signal.aborted ||
      request.argv.some((arg) => arg.includes('\0'))
    )
      throw new AgentUnavailable('the exec agent cannot take this command');
    const token = randomBytes(16).toString('hex');
    const marker = randomUUID();
    const { onOutput } = request;
    const stdout = new CappedSink(request.maxOutputBytes, onOutput && ((bytes) => onOutput('stdout', bytes)));
    const stderr = new CappedSink(request.maxOutputBytes, onOutput && ((bytes) => onOutput('stderr', bytes)));
    let timedOut = false;
    let killed: Promise<void> | undefined;
    let dropTimer: NodeJS.Timeout | undefined;
    let finish: Job['finish'] = () => {};
    const outcome = new Promise<{ code?: number; gone?: boolean }>((resolve) => {
      finish = resolve;
    });
    const job: Job = {
      out: new LineScanner(token),
      err: new LineScanner(token),
      stdout,
      stderr,
      acked: false,
      finish,
    };
    this.job = job;
    const kill = () => {
      killed ??= killMarked(this.container, marker).finally(() => {
        // The agent reports the end once the command's processes are gone; if it does not, drop it.
        dropTimer = setTimeout(() => this.close(), KILL_REPORT_MS);
      });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, request.timeoutMs);
    request.signal.addEventListener('abort', kill, { once: true });
    (this.stream as Duplex & { ref?: () => void }).ref?.();
    try {
      this.stream.write(`${token} ${marker} ${request.argv.map(quote).join(' ')}\n`);
      const { code, gone } = await outcome;
      await killed; // every marked process is gone, as after the Engine exec path's kill
      if (gone && !job.acked) throw new AgentUnavailable('the exec agent ended before the command started');
      return {
        exitCode: code ?? (timedOut || killed ? 137 : -1),
        stdout: stdout.bytes(),
        stderr: stderr.bytes(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        timedOut,
      };
    } finally {
      clearTimeout(timer);
      clearTimeout(dropTimer);
      request.signal.removeEventListener('abort', kill);
      this.job = undefined;
      if (this.strayed) this.close();
      else (this.stream as Duplex & { unref?: () => void }).unref?.();
    }
  }

  /** The Engine's multiplexed stream: 8-byte headers (stream, 0, 0, 0, length) each before its bytes. */
  private demux(chunk: Buffer): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (buf.length >= 8) {
      const length = buf.readUInt32BE(4);
      if (buf.length < 8 + length) break;
      const kind = buf[0];
      const payload = buf.subarray(8, 8 + length);
      buf = buf.subarray(8 + length);
      if (kind === 1) this.onBytes('stdout', payload);
      else if (kind === 2) this.onBytes('stderr', payload);
    }
    this.pending = buf.length ? Buffer.from(buf) : Buffer.alloc(0);
  }

  private onBytes(stream: 'stdout' | 'stderr', bytes: Buffer): void {
    if (this.readyWait) {
      this.readyBytes = Buffer.concat([this.readyBytes, bytes]);
      if (this.readyBytes.length >= READY.length || stream === 'stderr')
        this.readyWait(stream === 'stdout' && this.readyBytes.equals(READY));
      return;
    }
    const job = this.job;
    if (!job) {
      this.strayed = true;
      this.close();
      return;
    }
    const ended = () => (stream === 'stdout' ? job.outCode : job.errCode) !== undefined;
    const scanner = stream === 'stdout' ? job.out : job.err;
    const sink = stream === 'stdout' ? job.stdout : job.stderr;
    scanner.push(
      bytes,
      (output) => {
        // Output before the acknowledgement or after the end is not this command's.
        if (ended() || (stream === 'stdout' && !job.acked)) this.strayed = true;
        else sink.take(output);
      },
      (field) => {
        if (field === '+' && stream === 'stdout' && !job.acked) {
          job.acked = true;
        } else if (/^\d{1,3}$/.test(field) && !ended() && (stream === 'stderr' || job.acked)) {
          if (stream === 'stdout') job.outCode = Number(field);
          else job.errCode = Number(field);
          if (job.outCode !== undefined && job.errCode !== undefined) job.finish({ code: job.outCode });
        } else this.strayed = true;
      },
    );
  }

  private gone(): void {
    if (!this.alive) return;
    this.alive = false;
    this.readyWait?.(false);
    this.job?.finish({ gone: true });
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}

/** How long after an agent failed to start in a container before another is tried there. */
const RETRY_MS = 60_000;

/**
 * The exec agents of one driver, by container Engine id: at most one per container, at most `max` in
 * all. `take` answers an idle one, or starts one in the background and answers `undefined` (the
 * command then goes through the Engine's exec, as does any while the agent is busy).
 */
export class ExecAgents {
  private readonly agents = new Map<string, ExecAgent | 'starting' | number>();
  /** Containers whose agent is starting → settled once it is ready or failed (see {@link settled}). */
  private readonly starting = new Map<string, Promise<void>>();

  constructor(
    private readonly docker: Docker,
    private readonly log: (message: string, fields?: Record<string, unknown>) => void,
    private readonly max = 1_000,
  ) {}

  take(containerId: string): ExecAgent | undefined {
    const entry = this.agents.get(containerId);
    if (entry instanceof ExecAgent) return entry.idle ? entry : undefined;
    if (entry === 'starting') return undefined;
    if (typeof entry === 'number' && Date.now() - entry < RETRY_MS) return undefined;
    if (entry === undefined && this.agents.size >= this.max) return undefined;
    this.agents.set(containerId, 'starting');
    const started = ExecAgent.start(this.docker.getContainer(containerId)).then(
      (agent) => {
        if (this.agents.get(containerId) !== 'starting') return agent.close();
        this.agents.set(containerId, agent);
        agent.onClose(() => {
          if (this.agents.get(containerId) === agent) this.agents.delete(containerId);
        });
      },
      (error: unknown) => {
        this.agents.set(containerId, Date.now());
        this.log('docker driver: no exec agent in a container; its commands use the Engine exec', {
          container: containerId,
          error: (error as Error).message,
        });
      },
    );
    this.starting.set(
      containerId,
      started.finally(() => this.starting.delete(containerId)),
    );
    return undefined;
  }

  /**
   * An idle agent of the container, waiting up to `waitMs` for one that is starting (a computer's
   * first command, sent just after its start began one: waiting is quicker than an Engine exec beside
   * the agent's own). `undefined` when there is none, it is busy, or it is not ready in time.
   */
  async ready(containerId: string, waitMs: number): Promise<ExecAgent | undefined> {
    const starting = this.starting.get(containerId);
    if (starting) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        starting,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]).finally(() => clearTimeout(timer));
    }
    return this.take(containerId);
  }

  /** Forgets the container's agent (it is closed). */
  forget(containerId: string): void {
    const entry = this.agents.get(containerId);
    this.agents.delete(containerId);
    if (entry instanceof ExecAgent) entry.close();
  }

  /** Closes every agent. */
  close(): void {
    for (const id of [...this.agents.keys()]) this.forget(id);
  }
}
