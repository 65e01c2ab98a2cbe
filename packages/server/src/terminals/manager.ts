// The terminals this replica holds (design §17): one PTY per open terminal it opened, its output
// appended to the database as it comes (so any replica streams it), the messages other replicas leave
// in its inbox (input, resizes, closes) taken as they are announced, idle terminals closed, closed
// ones purged after their retention, the terminals of a computer that leaves `running` ended
// (`computer_stopped`), and every terminal it holds ended (`server_stopped`) when it stops.
import { randomUUID } from 'node:crypto';
import type { Schema } from '@svc/contract';
import type { DriverComputer } from '../computers/computer.js';
import { HANGUP_GRACE_MS } from '../computers/terminals/constants.js';
import type { Pty, PtyRequest, TerminalDriver } from '../computers/terminals/driver.js';
import type { Database, Queryable } from '../platform/db/database.js';
import { Wakeups } from '../streams/wakeups.js';
import type { TerminalConfig } from './config.js';
import { cutChunks } from './output.js';
import {
  appendTerminalOutput,
  beatHolder,
  closeTerminalRow,
  forgetHolder,
  heldOnStoppedComputers,
  idleTerminals,
  insertTerminalWithin,
  orphanedTerminals,
  purgeClosedTerminals,
  sendToHolder,
  TERMINAL_COMPUTER_CHANNEL,
  TERMINAL_INBOX_CHANNEL,
  TERMINAL_OUTPUT_CHANNEL,
  type TerminalRow,
  takeInbox,
  terminalById,
  terminalsHeldBy,
  touchTerminal,
} from './repositories/terminals.js';

/** How often idle and expired terminals are looked for. */
const SWEEP_MS = 30_000;
/** How often a replica holding terminals says it is alive (`terminal_holders`). */
const BEAT_MS = 10_000;
/** A holder silent so long is gone: its open terminals are ended by whichever replica sweeps next. */
const GONE_SECONDS = 45;
/**
 * A reader whose client has not taken an event for so long holds no program back: it stopped reading,
 * or takes less than an event (at most 64 KiB) a second. A reader slow for the server's own reasons
 * (its reads of the log wait on the database) holds the program back for as long as that lasts.
 */
const STALLED_MS = 1000;
/** While a program is paused, how often whether it may go on is looked at again. */
const PAUSE_CHECK_MS = 250;
/**
 * The last output events a holder keeps in memory for its own readers, who read them there and not
 * from the log (an echo waits for no statement): at most so many bytes, never older than the log keeps.
 */
const RECENT_BYTES = 256 * 1024;
/** Idle time is counted in seconds to minutes: typing touches the row at most so often. */
const TOUCH_MS = 1000;

/**
 * A reader of a terminal's output on this replica, as back-pressure sees it: whether it waits on its
 * client, where it is, and its end.
 */
export interface TerminalReader {
  /** It is writing an event to its client (blocked there while the client does not read). */
  sending(): void;
  /** It has written every byte before `position` to its client. */
  at(position: number): void;
  close(): void;
}

/**
 * The computer or the workspace has its quota of open terminals already (counted under a lock as the
 * terminal was recorded); its PTY was hung up.
 */
export class TerminalQuotaError extends Error {
  constructor(
    readonly quota: 'terminals_per_computer' | 'terminals_per_workspace',
    readonly limit: number,
    readonly open: number,
  ) {
    super(`${quota}: ${open} open of ${limit}`);
    this.name = 'TerminalQuotaError';
  }
}

/** A terminal this replica holds open ({@link Terminals.held}), for input without the database. */
export interface HeldTerminal {
  readonly id: string;
}

/** Who did what, for the audit log. */
export type Audit = (message: string, fields: Record<string, unknown>) => void;

/** One held terminal: its PTY and the output on its way to the log. */
class Session {
  readonly id: string;
  readonly workspaceId: string;
  readonly computerId: string;
  readonly pty: Pty;
  /** The last sequence given; the log's events are numbered from 1. */
  sequence = 0;
  offset = 0;
  /** Sequence and size of every output event kept, oldest first (older ones are dropped from the log). */
  readonly kept: { sequence: number; bytes: number }[] = [];
  keptBytes = 0;
  waiting: Uint8Array[] = [];
  /**
   * The last output events cut, oldest first and without a gap, whether or not their append has
   * committed yet: what this replica's readers read instead of the log while it holds the terminal.
   */
  recent: { sequence: number; data: Schema<'TerminalOutputChunk'>; bytes: number }[] = [];
  recentBytes = 0;
  /** When input through this replica last touched the row (idle time). */
  touched: number;
  /** Events cut whose append failed: tried again first with the next. */
  unsent: { sequence: number; data: Schema<'TerminalOutputChunk'>; bytes: number }[] = [];
  carry: Uint8Array = new Uint8Array();
  timer: NodeJS.Timeout | undefined;
  /** A flush is scheduled (at once or after `flushMs`). */
  scheduled = false;
  /** Appends under way. */
  appending = 0;
  /** The appends, one after the other. */
  chain: Promise<void> = Promise.resolve();
  /** Why it is being ended, when someone ends it (else it exited). */
  ending: Schema<'TerminalEndReason'> | undefined;
  readonly ended: Promise<void>;
  endNow!: () => void;
  active = false;
  /** Bytes taken from the PTY so far (where the next byte's offset is). */
  produced = 0;
  /** The program is paused for a reader that is too far behind. */
  paused = false;
  pauseCheck: NodeJS.Timeout | undefined;

  constructor(id: string, computer: DriverComputer, pty: Pty, now: number) {
    this.id = id;
    this.workspaceId = computer.workspace_id;
    this.computerId = computer.id;
    this.pty = pty;
    this.touched = now;
    this.ended = new Promise((resolve) => {
      this.endNow = resolve;
    });
  }
}

/**
 * The terminals of this replica.
 *
 * @example
 * const terminals = new Terminals({ db, config: config.terminals, driver: driver.terminals, audit });
 * await terminals.start();
 */
export class Terminals {
  /** This replica, as the `holder` of the terminals it opened. */
  readonly holder: string;
  /** Wake-ups of output streams, per terminal id (NOTIFY on the output channel). */
  readonly output = new Wakeups();
  readonly config: TerminalConfig;
  readonly #db: Database;
  readonly #driver: TerminalDriver | undefined;
  readonly #audit: Audit;
  readonly #sessions = new Map<string, Session>();
  /** The readers on this replica of each terminal: where each is, and since when it waits on its client. */
  readonly #readers = new Map<string, Set<{ position: number; blockedSince: number | undefined }>>();
  /** Input per terminal in the current second, taken through this replica. */
  readonly #inputWindow = new Map<string, { second: number; bytes: number }>();
  readonly #now: () => number;
  #unlisten: (() => Promise<void>)[] = [];
  #sweep: NodeJS.Timeout | undefined;
  #beat: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #stopped = false;

  constructor(options: {
    db: Database;
    config: TerminalConfig;
    driver: TerminalDriver | undefined;
    audit: Audit;
    now?: () => number;
    holder?: string;
  }) {
    this.#db = options.db;
    this.config = options.config;
    this.#driver = options.driver;
    this.#audit = options.audit;
    this.#now = options.now ?? Date.now;
    this.holder = options.holder ?? randomUUID();
  }

  /** Whether the driver can open terminals at all. */
  get available(): boolean {
    return this.#driver !== undefined;
  }

  /** Terminals held here now. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Listens for output (streams) and inbox messages (held terminals), and sweeps now and then. */
  async start(): Promise<void> {
    this.#unlisten.push(await this.output.listen(this.#db, TERMINAL_OUTPUT_CHANNEL));
    this.#unlisten.push(
      await this.#db.listen(TERMINAL_INBOX_CHANNEL, (id) => void this.#drainInbox(id), {
        onGap: () => {
          for (const id of this.#sessions.keys()) void this.#drainInbox(id);
        },
      }),
    );
    this.#unlisten.push(
      await this.#db.listen(TERMINAL_COMPUTER_CHANNEL, (id) => this.#computerStopped(id), {
        onGap: () => void this.#endOnStoppedComputers(),
      }),
    );
    this.#sweep = setInterval(() => void this.sweep().catch(() => {}), SWEEP_MS);
    this.#sweep.unref();
  }

  /** Says this replica is alive while it holds a terminal (and once more after its last ended). */
  #beatSoon(): void {
    if (this.#beat || this.#stopped) return;
    const beat = () => {
      // One at a time; a beat that fails (the database away) is tried at the next.
      this.#beating ??= beatHolder(this.#db, this.holder)
        .catch(() => {})
        .finally(() => {
          this.#beating = undefined;
        });
      if (this.#sessions.size === 0) {
        clearInterval(this.#beat);
        this.#beat = undefined;
      }
    };
    beat();
    this.#beat = setInterval(beat, BEAT_MS);
    this.#beat.unref();
  }

  /**
   * Opens a program on a PTY and records the terminal, held here. The PTY is opened first: a computer
   * that cannot run one leaves no row. The quotas are counted again as the row is written, under the
   * workspace's lock: an open that lost a race to the last place hangs its PTY up and throws
   * {@link TerminalQuotaError}.
   */
  async open(
    computer: DriverComputer,
    request: Omit<PtyRequest, 'signal'> & { id: string; createdBy: string },
    signal: AbortSignal,
  ): Promise<TerminalRow> {
    if (!this.#driver) throw new Error('no terminal driver');
    const pty = await this.#driver.open(computer, { ...request, signal });
    const session = new Session(request.id, computer, pty, this.#now());
    pty.onData((bytes) => this.#take(session, bytes));
    pty.onExit((code) => void this.#exited(session, code));
    this.#sessions.set(session.id, session);
    this.#beatSoon();
    await this.#beating;
    let row: TerminalRow;
    try {
      const inserted = await insertTerminalWithin(
        this.#db,
        {
          id: request.id,
          workspace_id: computer.workspace_id,
          computer_id: computer.id,
          cols: request.cols,
          rows: request.rows,
          command: pty.command,
          cwd: request.cwd ?? null,
          holder: this.holder,
          created_by: request.createdBy,
        },
        this.config,
      );
      if ('full' in inserted)
        throw inserted.full === 'computer'
          ? new TerminalQuotaError('terminals_per_computer', this.config.perComputer, inserted.open)
          : new TerminalQuotaError('terminals_per_workspace', this.config.perWorkspace, inserted.open);
      row = inserted.row;
    } catch (error) {
      this.#sessions.delete(session.id);
      pty.hangup();
      throw error;
    }
    session.active = true;
    this.#flushSoon(session);
    return row;
  }

  /**
   * Registers a reader of the terminal's output here. While a reader that is reading (its client took
   * an event in the last {@link STALLED_MS}) is more than half of what is kept behind the program, a
   * program held here is paused, as a slow terminal pauses it; it goes on once every such reader is
   * within a quarter. A reader whose client stopped reading holds nothing back: it falls behind what is
   * kept, and is told so (`cursor_expired`). Readers on other replicas do not pace it either.
   */
  reading(id: string): TerminalReader {
    const reader = { position: -1, blockedSince: undefined as number | undefined };
    let readers = this.#readers.get(id);
    if (!readers) {
      readers = new Set();
      this.#readers.set(id, readers);
    }
    readers.add(reader);
    const all = readers;
    return {
      sending: () => {
        reader.blockedSince ??= this.#now();
      },
      at: (position) => {
        reader.blockedSince = undefined;
        if (position > reader.position) reader.position = position;
        this.#pace(id);
      },
      close: () => {
        all.delete(reader);
        if (all.size === 0 && this.#readers.get(id) === all) this.#readers.delete(id);
        this.#pace(id);
      },
    };
  }

  /** Pauses or resumes the program of a terminal held here, by how far its slowest reading reader is. */
  #pace(id: string): void {
    const session = this.#sessions.get(id);
    if (!session) return;
    const now = this.#now();
    let slowest = Number.POSITIVE_INFINITY;
    for (const reader of this.#readers.get(id) ?? []) {
      const stalled = reader.blockedSince !== undefined && now - reader.blockedSince > STALLED_MS;
      if (reader.position < 0 || stalled) continue;
      slowest = Math.min(slowest, reader.position);
    }
    const behind = slowest === Number.POSITIVE_INFINITY ? 0 : session.produced - slowest;
    if (!session.paused && behind > this.config.keepBytes / 2) {
      session.paused = true;
      session.pty.pause();
      session.pauseCheck = setInterval(() => this.#pace(id), PAUSE_CHECK_MS);
      session.pauseCheck.unref();
    } else if (session.paused && behind <= this.config.keepBytes / 4) {
      session.paused = false;
      clearInterval(session.pauseCheck);
      session.pauseCheck = undefined;
      session.pty.resume();
    }
  }

  /** Whether this replica holds the terminal's PTY. */
  holds(id: string): boolean {
    return this.#sessions.has(id);
  }

  /**
   * Counts `bytes` of input to the terminal against its rate; the seconds to wait when over (nothing
   * counted then), else 0.
   */
  admitInput(id: string, bytes: number): number {
    const second = Math.floor(this.#now() / 1000);
    const window = this.#inputWindow.get(id);
    const used = window?.second === second ? window.bytes : 0;
    if (used + bytes > this.config.inputBytesPerSecond) return 1;
    this.#inputWindow.set(id, { second, bytes: used + bytes });
    return 0;
  }

  /**
   * Types `bytes` into the terminal, here or through its holder's inbox; `db` is the request's (its
   * transaction, on PGlite the one connection).
   */
  async input(db: Queryable, row: TerminalRow, bytes: Uint8Array): Promise<void> {
    const session = this.#sessions.get(row.id);
    if (session) return this.inputHeld(db, session, bytes);
    await sendToHolder(db, row.id, { kind: 'input', data: bytes });
    // A keystroke need not write the row again at once.
    if (this.#now() - row.used_at.getTime() >= TOUCH_MS) await touchTerminal(db, row.id);
  }

  /**
   * The terminal `id` when this replica holds it, open, on computer `computerId` of workspace
   * `workspaceId`: input to it needs no read of the database (its row says no more than the session
   * does). Anything else (held elsewhere, ended, another computer's) is undefined: ask the database.
   */
  held(id: string, workspaceId: string, computerId: string): HeldTerminal | undefined {
    const session = this.#sessions.get(id);
    if (!session?.active || session.workspaceId !== workspaceId || session.computerId !== computerId)
      return undefined;
    return session;
  }

  /** Types `bytes` into a terminal held here ({@link held}). */
  async inputHeld(db: Queryable, terminal: HeldTerminal, bytes: Uint8Array): Promise<void> {
    const session = terminal as Session;
    session.pty.write(bytes);
    const now = this.#now();
    if (now - session.touched < TOUCH_MS) return;
    session.touched = now;
    await touchTerminal(db, session.id);
  }

  /**
   * The output events after `after` (at most `limit`) from what this replica cut last, when it holds
   * the terminal and keeps them all in memory; undefined when the log must be read instead (not held
   * here, or `after` is older than what is kept in memory). Its own readers get an event as soon as it
   * is cut, before its append commits: the log gets the same event, with the same id, right after
   * (and the terminal's end is numbered after every id handed out, should an append never commit).
   */
  recentAfter(
    id: string,
    after: number,
    limit: number,
  ): { sequence: number; event: 'output'; data: Schema<'TerminalOutputChunk'> }[] | undefined {
    const recent = this.#sessions.get(id)?.recent;
    const first = recent?.[0]?.sequence;
    if (!recent || first === undefined || after < first - 1) return undefined;
    return recent
      .slice(after - first + 1, after - first + 1 + limit)
      .map(({ sequence, data }) => ({ sequence, event: 'output' as const, data }));
  }

  /** Resizes the terminal's PTY, here or through its holder's inbox (the row is the caller's). */
  async resize(db: Queryable, row: TerminalRow, cols: number, rows: number): Promise<void> {
    const session = this.#sessions.get(row.id);
    if (session) session.pty.resize(cols, rows);
    else await sendToHolder(db, row.id, { kind: 'resize', cols, rows });
  }

  /**
   * Ends the terminal (`reason`): its program is hung up; resolves once it is closed in the database
   * (its final event written), or the grace period passed and it was closed without an exit code.
   */
  async close(row: TerminalRow, reason: Schema<'TerminalEndReason'>): Promise<void> {
    const session = this.#sessions.get(row.id);
    if (!session) {
      if (row.holder) await sendToHolder(this.#db, row.id, { kind: 'close' });
      // A holder that does not answer in time (gone) leaves the terminal to be closed here.
      const deadline = this.#now() + HANGUP_GRACE_MS;
      while (this.#now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if ((await terminalById(this.#db, row.id))?.state !== 'open') return;
      }
      await closeTerminalRow(this.#db, row.id, {
        exitCode: undefined,
        reason: row.holder ? 'server_stopped' : reason,
      });
      return;
    }
    session.ending ??= reason;
    session.pty.hangup();
    const grace = new Promise<'late'>((resolve) => {
      const timer = setTimeout(() => resolve('late'), HANGUP_GRACE_MS);
      timer.unref();
    });
    if ((await Promise.race([session.ended.then(() => 'ended' as const), grace])) === 'late')
      await this.#exited(session, undefined);
  }

  /** Closes idle terminals held here and purges closed ones past their retention. */
  async sweep(): Promise<void> {
    const now = this.#now();
    for (const id of await idleTerminals(
      this.#db,
      this.holder,
      new Date(now - this.config.idleSeconds * 1000),
    )) {
      const session = this.#sessions.get(id);
      if (!session) continue;
      session.ending ??= 'idle';
      session.pty.hangup();
    }
    await this.#endOnStoppedComputers();
    // Terminals of a replica that ended without closing them (killed): their readers get the end.
    for (const id of await orphanedTerminals(this.#db, GONE_SECONDS))
      await closeTerminalRow(this.#db, id, { exitCode: undefined, reason: 'server_stopped' });
    // This replica's own, should another have judged it gone (it could not reach the database for
    // that long): their programs are hung up, since nobody can read or type to them any more.
    const open = new Set(await terminalsHeldBy(this.#db, this.holder));
    for (const session of this.#sessions.values()) {
      if (!session.active || open.has(session.id)) continue;
      session.ending ??= 'server_stopped';
      session.pty.hangup();
    }
    await purgeClosedTerminals(this.#db, new Date(now - this.config.retentionSeconds * 1000));
  }

  /** Ends every terminal held here (`server_stopped`): the replica stops, its PTYs with it. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#sweep);
    clearInterval(this.#beat);
    this.#beat = undefined;
    const sessions = [...this.#sessions.values()];
    for (const session of sessions) {
      session.ending = 'server_stopped';
      session.pty.hangup();
    }
    await Promise.all(sessions.map((session) => this.#exited(session, undefined).catch(() => {})));
    // Rows this replica held without a session (a failed start) end too.
    for (const id of await terminalsHeldBy(this.#db, this.holder).catch(() => [] as string[]))
      await closeTerminalRow(this.#db, id, { exitCode: undefined, reason: 'server_stopped' }).catch(() => {});
    await this.#beating;
    await forgetHolder(this.#db, this.holder).catch(() => {});
    for (const unlisten of this.#unlisten) await unlisten().catch(() => {});
    this.#unlisten = [];
  }

  /** The computer left `running`: its terminals held here end (`computer_stopped`). */
  #computerStopped(computerId: string): void {
    for (const session of this.#sessions.values()) {
      if (session.computerId !== computerId) continue;
      session.ending ??= 'computer_stopped';
      session.pty.hangup();
    }
  }

  /** The same for every computer no longer running (a notification missed, or a terminal opened late). */
  async #endOnStoppedComputers(): Promise<void> {
    const ids = await heldOnStoppedComputers(this.#db, this.holder).catch(() => [] as string[]);
    for (const id of ids) {
      const session = this.#sessions.get(id);
      if (!session) continue;
      session.ending ??= 'computer_stopped';
      session.pty.hangup();
    }
  }

  #take(session: Session, bytes: Uint8Array): void {
    session.waiting.push(bytes.slice());
    session.produced += bytes.byteLength;
    if (!session.paused && this.#readers.has(session.id)) this.#pace(session.id);
    this.#flushSoon(session);
  }

  /**
   * Schedules an append of what is waiting. With no append under way it goes at once (a keystroke's
   * echo waits for nothing); while one is being written, what comes meanwhile waits `flushMs` and goes
   * with what follows it, in one statement.
   */
  #flushSoon(session: Session): void {
    if (!session.active || session.scheduled) return;
    session.scheduled = true;
    const run = () => {
      session.scheduled = false;
      session.timer = undefined;
      if (this.#sessions.get(session.id) !== session) return;
      session.appending += 1;
      session.chain = session.chain
        .then(() => this.#flush(session, false))
        .catch(() => {
          // Kept in `unsent`; tried again shortly (the database may be back).
          setTimeout(() => this.#flushSoon(session), 100).unref();
        })
        .finally(() => {
          session.appending -= 1;
        });
    };
    if (session.appending === 0) setImmediate(run);
    else session.timer = setTimeout(run, this.config.flushMs);
  }

  /** Appends what is waiting; the log keeps the last `keepBytes` of output. */
  async #flush(session: Session, final: boolean): Promise<void> {
    if (session.waiting.length === 0 && session.unsent.length === 0 && (!final || session.carry.length === 0))
      return;
    const all = Buffer.concat([session.carry, ...session.waiting]);
    session.waiting = [];
    const { chunks, carry } = cutChunks(session.offset, all, final);
    session.carry = carry;
    const events = chunks.map(({ chunk, bytes }) => {
      session.offset += bytes;
      session.sequence += 1;
      session.kept.push({ sequence: session.sequence, bytes });
      session.keptBytes += bytes;
      return { sequence: session.sequence, data: chunk, bytes };
    });
    while (session.keptBytes > this.config.keepBytes && session.kept.length > 1) {
      const dropped = session.kept.shift() as { bytes: number };
      session.keptBytes -= dropped.bytes;
    }
    const keepFrom = session.kept[0]?.sequence ?? session.sequence + 1;
    const batch = [...session.unsent, ...events].filter((e) => e.sequence >= keepFrom);
    session.unsent = batch;
    // Readers on this replica get the events now, from memory; the log has them once the append commits.
    this.#recent(session, events, keepFrom);
    if (events.length > 0) this.output.notify(session.id);
    await appendTerminalOutput(this.#db, session.id, batch, keepFrom);
    session.unsent = [];
  }

  /** Keeps the events just cut for this replica's readers ({@link recentAfter}). */
  #recent(session: Session, events: Session['recent'], keepFrom: number): void {
    const recent = session.recent;
    for (const event of events) {
      recent.push(event);
      session.recentBytes += event.bytes;
    }
    let drop = 0;
    while (
      drop < recent.length - 1 &&
      ((recent[drop]?.sequence ?? 0) < keepFrom || session.recentBytes > RECENT_BYTES)
    ) {
      session.recentBytes -= recent[drop]?.bytes ?? 0;
      drop += 1;
    }
    if (drop > 0) recent.splice(0, drop);
  }

  async #exited(session: Session, code: number | undefined): Promise<void> {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    this.#inputWindow.delete(session.id);
    clearInterval(session.pauseCheck);
    clearTimeout(session.timer);
    session.timer = undefined;
    const reason = session.ending ?? 'exited';
    try {
      if (session.active) {
        session.chain = session.chain.then(() => this.#flush(session, true)).catch(() => {});
        await session.chain;
        await closeTerminalRow(this.#db, session.id, {
          exitCode: reason === 'server_stopped' ? undefined : code,
          reason,
          after: session.sequence,
        });
        this.#audit('terminal closed', { terminal_id: session.id, reason, exit_code: code ?? null });
      }
    } finally {
      session.endNow();
    }
  }

  async #drainInbox(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (!session) return;
    let messages: Awaited<ReturnType<typeof takeInbox>>;
    try {
      messages = await takeInbox(this.#db, id);
    } catch {
      return;
    }
    for (const message of messages) {
      if (message.kind === 'input') session.pty.write(message.data);
      else if (message.kind === 'resize') session.pty.resize(message.cols, message.rows);
      else {
        session.ending ??= 'closed';
        session.pty.hangup();
      }
    }
  }
}
