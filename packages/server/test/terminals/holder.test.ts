// The replica holding a terminal (terminals/manager.ts): input to a terminal it holds needs no read of
// the database, and only for the computer and workspace it belongs to; its own readers get what the
// program wrote as soon as it is cut, before the append commits, and the log gets the same events with
// the same ids; should an append never commit, the terminal's end is numbered after every id handed out.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { DriverComputer } from '../../src/computers/computer.js';
import { Listeners, type Pty } from '../../src/computers/terminals/driver.js';
import type { Database, Queryable } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { Terminals } from '../../src/terminals/manager.js';
import {
  insertTerminal,
  terminalById,
  terminalOutputAfter,
} from '../../src/terminals/repositories/terminals.js';
import { describeEngines } from '../support/databases.js';
import { createWorkspace } from '../support/fixtures.js';

/** A PTY that writes what the test says and ends when told (named simulated: no program runs). */
function scriptedPty(): Pty & { say(text: string): void; end(code: number): void; written: string[] } {
  const data = new Listeners<Uint8Array>();
  const exit = new Listeners<number | undefined>();
  const written: string[] = [];
  return {
    command: ['/bin/sh'],
    written,
    write: (bytes) => void written.push(Buffer.from(bytes).toString()),
    resize: () => {},
    hangup: () => exit.emit(129),
    pause: () => {},
    resume: () => {},
    onData: (listener) => data.add(listener),
    onExit: (listener) => exit.add(listener),
    say: (text) => data.emit(new TextEncoder().encode(text)),
    end: (code) => exit.emit(code),
  };
}

/** The database, with the terminal output appends held (or failed) while `appends` says so. */
function withAppends(
  db: Database,
  appends: { mode: 'go' | 'hold' | 'fail'; held: (() => void)[] },
): Database {
  const query: Queryable['query'] = async (sql, params) => {
    if (/INSERT INTO terminal_output/.test(sql) && !/'exit'/.test(sql)) {
      if (appends.mode === 'fail') throw new Error('the append failed (as the test asked)');
      if (appends.mode === 'hold') await new Promise<void>((resolve) => appends.held.push(resolve));
    }
    return db.query(sql, params);
  };
  return { ...db, query } as Database;
}

const until = async (what: () => boolean | Promise<boolean>, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describeEngines('the replica holding a terminal', (engine) => {
  let db: Database;
  let computer: DriverComputer;
  let otherComputer: string;
  const appends = { mode: 'go' as 'go' | 'hold' | 'fail', held: [] as (() => void)[] };
  let terminals: Terminals;
  let pty: ReturnType<typeof scriptedPty>;

  beforeAll(async () => {
    db = await engine.open();
    const { userId, workspaceId } = await createWorkspace(db);
    const insertComputer = async (name: string) => {
      const id = newId();
      await db.query(
        `INSERT INTO computers (id, workspace_id, name, state, size, image, created_by)
         VALUES ($1, $2, $3, 'running', 'small', 'ubuntu-2404', $4)`,
        [id, workspaceId, name, userId],
      );
      return id;
    };
    computer = {
      id: await insertComputer('held'),
      workspace_id: workspaceId,
      name: 'held',
      size: 'small',
      image: 'ubuntu-2404',
      labels: {},
    };
    otherComputer = await insertComputer('other');
    terminals = new Terminals({
      db: withAppends(db, appends),
      config: {
        perComputer: 8,
        perWorkspace: 32,
        inputBytesPerSecond: 262_144,
        keepBytes: 1 << 20,
        idleSeconds: 900,
        retentionSeconds: 3600,
        flushMs: 2,
      },
      driver: {
        open: async () => {
          pty = scriptedPty();
          return pty;
        },
      },
      audit: () => {},
    });
  });
  afterAll(async () => {
    appends.mode = 'go';
    for (const release of appends.held.splice(0)) release();
    await terminals.stop();
  });

  const open = () =>
    terminals.open(
      computer,
      { id: newId(), createdBy: 'someone', command: undefined, cwd: undefined, env: {}, cols: 80, rows: 24 },
      AbortSignal.timeout(5000),
    );

  test('input to a terminal held here is taken only for its own computer and workspace', async () => {
    const row = await open();
    const held = terminals.held(row.id, computer.workspace_id, computer.id);
    expect(held?.id).toBe(row.id);
    expect(terminals.held(row.id, computer.workspace_id, otherComputer)).toBeUndefined();
    expect(terminals.held(row.id, newId(), computer.id)).toBeUndefined();
    expect(terminals.held(newId(), computer.workspace_id, computer.id)).toBeUndefined();
    await terminals.inputHeld(db, held as NonNullable<typeof held>, new TextEncoder().encode('ls\r'));
    expect(pty.written).toEqual(['ls\r']);
    pty.end(0);
    await until(() => terminals.held(row.id, computer.workspace_id, computer.id) === undefined);
  });

  test("the holder's readers get output before its append commits; the log gets the same events after", async () => {
    const row = await open();
    appends.mode = 'hold';
    pty.say('hello');
    await until(() => (terminals.recentAfter(row.id, 0, 200)?.length ?? 0) > 0);
    const early = terminals.recentAfter(row.id, 0, 200) ?? [];
    expect(early.map((event) => event.data.data).join('')).toBe('hello');
    // Not in the log yet: the append is held.
    expect(await terminalOutputAfter(db, row.id, 0, 200)).toEqual([]);
    appends.mode = 'go';
    for (const release of appends.held.splice(0)) release();
    await until(async () => (await terminalOutputAfter(db, row.id, 0, 200)).length === early.length);
    const logged = await terminalOutputAfter(db, row.id, 0, 200);
    expect(logged.map((event) => Number(event.sequence))).toEqual(early.map((event) => event.sequence));
    expect(logged.map((event) => event.data)).toEqual(early.map((event) => event.data));
    // A cursor older than what is kept in memory reads the log.
    expect(terminals.recentAfter(row.id, -5, 200)).toBeUndefined();
    pty.end(0);
    await until(async () => (await terminalOutputAfter(db, row.id, 0, 200)).some((e) => e.event === 'exit'));
  });

  test('an append that never commits: the end is numbered after every id a reader was given', async () => {
    const row = await open();
    pty.say('lost');
    await until(async () => (await terminalOutputAfter(db, row.id, 0, 200)).length > 0);
    appends.mode = 'fail';
    pty.say(' for ever');
    await until(() => (terminals.recentAfter(row.id, 0, 200)?.length ?? 0) > 1);
    const handed = Math.max(...(terminals.recentAfter(row.id, 0, 200) ?? []).map((event) => event.sequence));
    pty.end(7);
    await until(async () => (await terminalOutputAfter(db, row.id, 0, 200)).some((e) => e.event === 'exit'));
    appends.mode = 'go';
    const events = await terminalOutputAfter(db, row.id, 0, 200);
    const exit = events.find((event) => event.event === 'exit');
    expect(Number(exit?.sequence)).toBe(handed + 1);
    expect(exit?.data).toMatchObject({ exit_code: 7, reason: 'exited' });
    // What the log kept stops before what was lost: a reader of the log sees the gap (cursor_expired).
    expect(events.filter((event) => event.event === 'output').map((event) => Number(event.sequence))).toEqual(
      [1],
    );
  });

  test("a holder that went silent has its open terminals ended by another replica's sweep; one that never said it was alive is left", async () => {
    const row = await open();
    const other = new Terminals({
      db,
      config: terminals.config,
      driver: undefined,
      audit: () => {},
    });
    await other.sweep();
    expect((await terminalById(db, row.id))?.state).toBe('open');
    // A replica of an earlier version holds one too, and never writes terminal_holders.
    const old = await insertTerminal(db, {
      id: newId(),
      workspace_id: computer.workspace_id,
      computer_id: computer.id,
      cols: 80,
      rows: 24,
      command: ['/bin/sh'],
      cwd: null,
      holder: 'a-replica-of-an-earlier-version',
      created_by: 'someone',
    });
    // The holder stops saying it is alive (as a killed replica would).
    await db.query(`UPDATE terminal_holders SET seen_at = now() - interval '1 hour' WHERE holder = $1`, [
      terminals.holder,
    ]);
    await other.sweep();
    const ended = await terminalById(db, row.id);
    expect(ended).toMatchObject({ state: 'closed', end_reason: 'server_stopped', exit_code: null });
    const events = await terminalOutputAfter(db, row.id, 0, 200);
    expect(events.at(-1)).toMatchObject({ event: 'exit', data: { reason: 'server_stopped' } });
    expect((await terminalById(db, old.id))?.state).toBe('open');
    // The holder was alive after all (cut off from the database): its next sweep hangs the program up.
    expect(terminals.held(row.id, computer.workspace_id, computer.id)).toBeDefined();
    await terminals.sweep();
    await until(() => terminals.held(row.id, computer.workspace_id, computer.id) === undefined);
    await db.query(`UPDATE terminals SET state = 'closed', closed_at = now() WHERE id = $1`, [old.id]);
    await other.stop();
  });
});
