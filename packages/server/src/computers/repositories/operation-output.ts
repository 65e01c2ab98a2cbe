import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';

// A command's output log (design §14, migration 014): the chunks a `computer.exec` operation's command
// wrote, then its final event. The worker appends (operations/output-log.ts, fenced by its claim);
// streams read.

/**
 * The NOTIFY channel of the output log: its payload is the id of an operation whose log grew, sent
 * when the append commits (a trigger of migration 014 names it in SQL; a test keeps them equal).
 */
export const OPERATION_OUTPUT_CHANNEL = 'svc_operation_output';

/** One event of a command's output log: `sequence` is the SSE `id`, `event` its name, `data` its JSON. */
export type OutputEventRecord =
  | { sequence: number; event: 'output'; data: Schema<'OutputChunk'> }
  | { sequence: number; event: 'exit'; data: Schema<'CommandExit'> }
  | { sequence: number; event: 'failed'; data: Schema<'Error'> };

/** An event before it has a place in the log. */
export type OutputEvent = OutputEventRecord extends infer R
  ? R extends { sequence: number }
    ? Omit<R, 'sequence'>
    : never
  : never;

/**
 * The events of the operation's output log after `after`, oldest first, at most `limit`. The last
 * event of a finished log is `exit` or `failed`.
 *
 * @example
 * const events = await operationOutputAfter(db, operation.id, 0, 100);
 */
export async function operationOutputAfter(
  db: Queryable,
  operationId: string,
  after: number,
  limit: number,
): Promise<OutputEventRecord[]> {
  const { rows } = await db.query<OutputEventRecord>(
    `SELECT sequence, event, data FROM operation_output WHERE operation_id = $1 AND sequence > $2
      ORDER BY sequence LIMIT $3`,
    [operationId, after, limit],
  );
  return rows;
}

/**
 * The last event of a command's log (the highest sequence), or undefined when nothing was logged.
 *
 * @example
 * const last = await lastOperationOutput(db, operation.id); // { sequence: 7, event: 'exit', … }
 */
export async function lastOperationOutput(
  db: Queryable,
  operationId: string,
): Promise<OutputEventRecord | undefined> {
  const { rows } = await db.query<OutputEventRecord>(
    `SELECT sequence, event, data FROM operation_output WHERE operation_id = $1
      ORDER BY sequence DESC LIMIT 1`,
    [operationId],
  );
  return rows[0];
}

/**
 * Appends `events` to the log of a command the claim `token` still runs; false (nothing written)
 * when the claim no longer holds it. The claim's row is locked for share meanwhile, so a takeover
 * waits for the append rather than interleaving with it.
 *
 * @example
 * if (!(await appendOperationOutput(db, operation.id, token, chunks))) abort();
 */
export async function appendOperationOutput(
  db: Queryable,
  operationId: string,
  token: string,
  events: readonly OutputEvent[],
): Promise<boolean> {
  if (events.length === 0) return true;
  const { rows } = await db.query<{ owned: boolean }>(
    `WITH claim AS (
       SELECT id FROM operations WHERE id = $1 AND claimed_by = $2 AND state = 'running' FOR SHARE
     ), appended AS (
       INSERT INTO operation_output (operation_id, sequence, event, data)
       SELECT claim.id, base.last + item.n, item.value ->> 'event', item.value -> 'data'
         FROM claim,
              (SELECT coalesce(max(sequence), 0) AS last FROM operation_output WHERE operation_id = $1) AS base,
              jsonb_array_elements($3::jsonb -> 'events') WITH ORDINALITY AS item (value, n)
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM claim) AS owned, (SELECT count(*) FROM appended) AS appended`,
    // An object, not an array: pg would send an array as a PostgreSQL array, not as JSON.
    [operationId, token, { events }],
  );
  return rows[0]?.owned === true;
}

/**
 * Appends `events` to an operation's log without a fence: for the transaction that ends the operation,
 * which has just ended it under its claim (the chunks not appended yet, and the final event).
 *
 * @example
 * await appendEndingOutput(tx, operation.id, [...rest, { event: 'exit', data: exit }]);
 */
export async function appendEndingOutput(
  db: Queryable,
  operationId: string,
  events: readonly OutputEvent[],
): Promise<void> {
  if (events.length === 0) return;
  await db.query(
    `INSERT INTO operation_output (operation_id, sequence, event, data)
     SELECT $1, base.last + item.n, item.value ->> 'event', item.value -> 'data'
       FROM (SELECT coalesce(max(sequence), 0) AS last FROM operation_output WHERE operation_id = $1) AS base,
            jsonb_array_elements($2::jsonb -> 'events') WITH ORDINALITY AS item (value, n)`,
    [operationId, { events }],
  );
}

/**
 * Deletes the output of commands that ended more than `hours` ago (`SVC_OUTPUT_RETENTION_HOURS`);
 * how many events.
 *
 * @example
 * const events = await purgeOperationOutput(db, 24);
 */
export async function purgeOperationOutput(db: Queryable, hours: number): Promise<number> {
  return (
    await db.query(
      `DELETE FROM operation_output o USING operations p
        WHERE p.id = o.operation_id AND p.completed_at < now() - make_interval(hours => $1)`,
      [hours],
    )
  ).rowCount;
}
