// The SQL of terminals (design §17, migration 020): their rows, their output log, and the inbox that
// carries input, resizes and closes to the replica holding the PTY.
import type { Schema } from '@svc/contract';
import type { Database, Queryable } from '../../platform/db/database.js';
import { ownerPage } from '../../platform/repositories/keyset.js';

/** NOTIFY channel of the output log: the payload is the terminal id (migration 020's trigger). */
export const TERMINAL_OUTPUT_CHANNEL = 'svc_terminal_output';
/** NOTIFY channel of the inbox: the payload is the terminal id. */
export const TERMINAL_INBOX_CHANNEL = 'svc_terminal_inbox';
/** NOTIFY channel of computers leaving `running` (migration 023's trigger): the payload is the computer id. */
export const TERMINAL_COMPUTER_CHANNEL = 'svc_terminal_computer';

/** A terminal's row. */
export interface TerminalRow {
  id: string;
  workspace_id: string;
  computer_id: string;
  state: 'open' | 'closed';
  cols: number;
  rows: number;
  command: string[];
  cwd: string | null;
  holder: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  used_at: Date;
  closed_at: Date | null;
  exit_code: number | null;
  end_reason: Schema<'TerminalEndReason'> | null;
}

/** One event of a terminal's output log: `sequence` is the SSE `id`. */
export type TerminalEventRecord =
  | { sequence: number; event: 'output'; data: Schema<'TerminalOutputChunk'> }
  | { sequence: number; event: 'exit'; data: Schema<'TerminalExit'> };

/** One message for the holder of a PTY. */
export type InboxRecord =
  | { sequence: number; kind: 'input'; data: Uint8Array }
  | { sequence: number; kind: 'resize'; cols: number; rows: number }
  | { sequence: number; kind: 'close' };

/** Records a new open terminal held by `holder`. */
export async function insertTerminal(
  db: Queryable,
  row: Pick<
    TerminalRow,
    'id' | 'workspace_id' | 'computer_id' | 'cols' | 'rows' | 'command' | 'cwd' | 'holder' | 'created_by'
  >,
): Promise<TerminalRow> {
  const { rows } = await db.query<TerminalRow>(
    `INSERT INTO terminals (id, workspace_id, computer_id, cols, rows, command, cwd, holder, created_by)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9) RETURNING *`,
    [
      row.id,
      row.workspace_id,
      row.computer_id,
      row.cols,
      row.rows,
      JSON.stringify(row.command),
      row.cwd,
      row.holder,
      row.created_by,
    ],
  );
  return rows[0] as TerminalRow;
}

/**
 * Records a new open terminal as {@link insertTerminal} does, unless the computer or its workspace has
 * its quota of open terminals already: counted and inserted in one transaction under the workspace's
 * row lock, so concurrent opens are counted one after the other. Answers the row, or which quota is full.
 *
 * @example
 * const got = await insertTerminalWithin(db, row, { perComputer: 8, perWorkspace: 32 });
 * if ('full' in got) throw …; // got.full: 'computer' | 'workspace', got.open: the count
 */
export async function insertTerminalWithin(
  db: Database,
  row: Parameters<typeof insertTerminal>[1],
  limits: { perComputer: number; perWorkspace: number },
): Promise<{ row: TerminalRow } | { full: 'computer' | 'workspace'; open: number }> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT id FROM workspaces WHERE id = $1 FOR UPDATE', [row.workspace_id]);
    const open = await countOpenTerminals(tx, row.workspace_id, row.computer_id);
    if (open.computer >= limits.perComputer) return { full: 'computer' as const, open: open.computer };
    if (open.workspace >= limits.perWorkspace) return { full: 'workspace' as const, open: open.workspace };
    return { row: await insertTerminal(tx, row) };
  });
}

/** Open terminals held by `holder` whose computer is no longer running (it stopped or went away). */
export async function heldOnStoppedComputers(db: Queryable, holder: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT t.id FROM terminals t LEFT JOIN computers c ON c.id = t.computer_id
      WHERE t.holder = $1 AND t.state = 'open' AND (c.id IS NULL OR c.state <> 'running')`,
    [holder],
  );
  return rows.map((r) => r.id);
}

/** The terminal of a computer, or undefined. */
export async function terminalOf(
  db: Queryable,
  computerId: string,
  id: string,
): Promise<TerminalRow | undefined> {
  const { rows } = await db.query<TerminalRow>('SELECT * FROM terminals WHERE id = $1 AND computer_id = $2', [
    id,
    computerId,
  ]);
  return rows[0];
}

/** A terminal by id alone (the holder's own reads). */
export async function terminalById(db: Queryable, id: string): Promise<TerminalRow | undefined> {
  const { rows } = await db.query<TerminalRow>('SELECT * FROM terminals WHERE id = $1', [id]);
  return rows[0];
}

/** A page of a computer's terminals, newest first (`after`: the previous page's last id). */
export async function listTerminalRows(
  db: Queryable,
  filter: { computerId: string; after: string | null; limit: number },
): Promise<TerminalRow[]> {
  const page = ownerPage('computer_id', '$1');
  const { rows } = await db.query<TerminalRow>(
    `SELECT * FROM terminals WHERE ${page.where} AND ($2::text IS NULL OR id < $2)
      ORDER BY ${page.order} LIMIT $3`,
    [filter.computerId, filter.after, filter.limit],
  );
  return rows;
}

/** Open terminals on the computer and in its workspace (the quotas). */
export async function countOpenTerminals(
  db: Queryable,
  workspaceId: string,
  computerId: string,
): Promise<{ computer: number; workspace: number }> {
  const { rows } = await db.query<{ computer: number; workspace: number }>(
    `SELECT count(*) FILTER (WHERE computer_id = $2)::integer AS computer, count(*)::integer AS workspace
       FROM terminals WHERE workspace_id = $1 AND state = 'open'`,
    [workspaceId, computerId],
  );
  return rows[0] ?? { computer: 0, workspace: 0 };
}

/** Marks a terminal used now (input, a resize, a reader): its idle time starts again. */
export async function touchTerminal(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE terminals SET used_at = now() WHERE id = $1', [id]);
}

/** A resize, recorded; the updated row, or undefined when it is not open. */
export async function resizeTerminalRow(
  db: Queryable,
  id: string,
  cols: number,
  rows: number,
): Promise<TerminalRow | undefined> {
  const result = await db.query<TerminalRow>(
    `UPDATE terminals SET cols = $2, rows = $3, updated_at = now(), used_at = now()
      WHERE id = $1 AND state = 'open' RETURNING *`,
    [id, cols, rows],
  );
  return result.rows[0];
}

/**
 * Ends an open terminal: its row `closed` with how, and its final `exit` event appended after the
 * log's last (and after `end.after`, the last id its holder handed out to readers, should an append of
 * those never have committed), in one statement; false when it was closed already (nothing written).
 */
export async function closeTerminalRow(
  db: Queryable,
  id: string,
  end: { exitCode: number | undefined; reason: Schema<'TerminalEndReason'>; after?: number },
): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `WITH closed AS (
       UPDATE terminals SET state = 'closed', closed_at = now(), updated_at = now(), exit_code = $2,
              end_reason = $3, holder = NULL
        WHERE id = $1 AND state = 'open'
        RETURNING id, closed_at
     )
     INSERT INTO terminal_output (terminal_id, sequence, event, data)
     SELECT closed.id,
            GREATEST(COALESCE((SELECT max(sequence) FROM terminal_output WHERE terminal_id = $1), 0), $4) + 1,
            'exit',
            jsonb_strip_nulls(jsonb_build_object('exit_code', $2::integer, 'reason', $3::text,
              'closed_at', to_char(closed.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))
       FROM closed
     RETURNING terminal_id AS id`,
    [id, end.exitCode ?? null, end.reason, end.after ?? 0],
  );
  return rows.length > 0;
}

/**
 * Appends output events (numbered from `first`) and drops the events before `keepFrom` (older output
 * than what is kept for reattach), in one statement.
 */
export async function appendTerminalOutput(
  // The pool, never a transaction: the setting would hold for the whole transaction.
  db: Database,
  id: string,
  events: readonly { sequence: number; data: Schema<'TerminalOutputChunk'>; bytes: number }[],
  keepFrom: number,
): Promise<void> {
  if (events.length === 0) return;
  // One row of parameters per event (no array parameters: PGlite and pg serialize them differently).
  const values = events.map(
    (_, i) => `($1, $${3 * i + 3}::integer, 'output', $${3 * i + 4}::jsonb, $${3 * i + 5}::integer)`,
  );
  // Committed without waiting for the WAL to reach the disk (`synchronous_commit` off for this
  // statement alone): a database crash may lose the last milliseconds of a terminal's output, which
  // dies with its PTY anyway; its end (closeTerminalRow) is a commit like any other, flushing all of it.
  // A keystroke's echo then waits for no disk.
  await db.query(
    `WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true)),
          dropped AS (DELETE FROM terminal_output WHERE terminal_id = $1 AND sequence < $2)
     INSERT INTO terminal_output (terminal_id, sequence, event, data, bytes)
     SELECT v.terminal_id, v.sequence, v.event, v.data, v.bytes
       FROM (VALUES ${values.join(', ')}) AS v (terminal_id, sequence, event, data, bytes), no_flush`,
    [id, keepFrom, ...events.flatMap((e) => [e.sequence, JSON.stringify(e.data), e.bytes])],
  );
}

/** The events after `after`, oldest first, at most `limit`. */
export async function terminalOutputAfter(
  db: Queryable,
  id: string,
  after: number,
  limit: number,
): Promise<TerminalEventRecord[]> {
  const { rows } = await db.query<TerminalEventRecord>(
    `SELECT sequence, event, data FROM terminal_output WHERE terminal_id = $1 AND sequence > $2
      ORDER BY sequence LIMIT $3`,
    [id, after, limit],
  );
  return rows;
}

/** The first and last sequence kept (0 and 0 when none). */
export async function terminalOutputBounds(
  db: Queryable,
  id: string,
): Promise<{ first: number; last: number }> {
  const { rows } = await db.query<{ first: number | null; last: number | null }>(
    'SELECT min(sequence) AS first, max(sequence) AS last FROM terminal_output WHERE terminal_id = $1',
    [id],
  );
  return { first: Number(rows[0]?.first ?? 0), last: Number(rows[0]?.last ?? 0) };
}

/** Every kept `output` chunk, in order (the screen replays them). */
export async function keptTerminalOutput(
  db: Queryable,
  id: string,
): Promise<Schema<'TerminalOutputChunk'>[]> {
  const { rows } = await db.query<{ data: Schema<'TerminalOutputChunk'> }>(
    `SELECT data FROM terminal_output WHERE terminal_id = $1 AND event = 'output' ORDER BY sequence`,
    [id],
  );
  return rows.map((row) => row.data);
}

/** Puts a message in the inbox of the terminal's holder (its insert wakes the holder). */
export async function sendToHolder(
  db: Queryable,
  id: string,
  message:
    | { kind: 'input'; data: Uint8Array }
    | { kind: 'resize'; cols: number; rows: number }
    | { kind: 'close' },
): Promise<void> {
  await db.query(
    'INSERT INTO terminal_inbox (terminal_id, kind, data, cols, rows) VALUES ($1, $2, $3, $4, $5)',
    [
      id,
      message.kind,
      message.kind === 'input' ? Buffer.from(message.data) : null,
      message.kind === 'resize' ? message.cols : null,
      message.kind === 'resize' ? message.rows : null,
    ],
  );
}

/** Takes (reads and deletes) the inbox of a terminal, oldest first. */
export async function takeInbox(db: Queryable, id: string): Promise<InboxRecord[]> {
  const { rows } = await db.query<{
    sequence: number;
    kind: InboxRecord['kind'];
    data: Uint8Array | null;
    cols: number | null;
    rows: number | null;
  }>('DELETE FROM terminal_inbox WHERE terminal_id = $1 RETURNING sequence, kind, data, cols, rows', [id]);
  return rows
    .sort((a, b) => Number(a.sequence) - Number(b.sequence))
    .map((row): InboxRecord => {
      const sequence = Number(row.sequence);
      if (row.kind === 'input') return { sequence, kind: 'input', data: new Uint8Array(row.data ?? []) };
      if (row.kind === 'resize')
        return { sequence, kind: 'resize', cols: row.cols ?? 80, rows: row.rows ?? 24 };
      return { sequence, kind: 'close' };
    });
}

/** `holder` is alive now (its row in `terminal_holders`, migration 024). */
export async function beatHolder(db: Queryable, holder: string): Promise<void> {
  await db.query(
    `INSERT INTO terminal_holders (holder, seen_at) VALUES ($1, now())
     ON CONFLICT (holder) DO UPDATE SET seen_at = now()`,
    [holder],
  );
}

/** `holder` stopped, its terminals closed: it is judged no more. */
export async function forgetHolder(db: Queryable, holder: string): Promise<void> {
  await db.query('DELETE FROM terminal_holders WHERE holder = $1', [holder]);
}

/**
 * Open terminals whose holder has not said it is alive for `seconds` (it ended without closing them);
 * holders so silent that hold no open terminal any more are forgotten.
 */
export async function orphanedTerminals(db: Queryable, seconds: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH gone AS (
       SELECT holder FROM terminal_holders WHERE seen_at < now() - make_interval(secs => $1)
     ), forgotten AS (
       DELETE FROM terminal_holders h USING gone
        WHERE h.holder = gone.holder
          AND NOT EXISTS (SELECT 1 FROM terminals t WHERE t.holder = gone.holder AND t.state = 'open')
     )
     SELECT t.id FROM terminals t JOIN gone ON gone.holder = t.holder WHERE t.state = 'open'`,
    [seconds],
  );
  return rows.map((row) => row.id);
}

/** Open terminals held by `holder` (a replica ending its terminals when it stops). */
export async function terminalsHeldBy(db: Queryable, holder: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM terminals WHERE holder = $1 AND state = 'open'`,
    [holder],
  );
  return rows.map((row) => row.id);
}

/** Open terminals not used since `before` (idle), of `holder`. */
export async function idleTerminals(db: Queryable, holder: string, before: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM terminals WHERE holder = $1 AND state = 'open' AND used_at < $2`,
    [holder, before],
  );
  return rows.map((row) => row.id);
}

/** Open terminals of a computer (it stopped: they end). */
export async function openTerminalsOf(db: Queryable, computerId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM terminals WHERE computer_id = $1 AND state = 'open'`,
    [computerId],
  );
  return rows.map((row) => row.id);
}

/** Deletes terminals closed before `before`, with their output (retention). */
export async function purgeClosedTerminals(db: Queryable, before: Date): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `DELETE FROM terminals WHERE state = 'closed' AND closed_at < $1 RETURNING id`,
    [before],
  );
  return rows.length;
}
