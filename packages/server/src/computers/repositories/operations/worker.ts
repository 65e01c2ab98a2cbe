import type { Database, Queryable } from '../../../platform/db/database.js';
import type { ComputerState } from '../../states.js';
import { type ComputerRow, releaseComputerPlace } from '../computers.js';
import { appendEndingOutput, type OutputEvent } from '../operation-output.js';
import { OPERATION_DONE_CHANNEL, type OperationRow } from '../operations.js';

// The statements of the operation worker (operations/worker.ts). A claim is fenced by its token: every
// write below changes nothing (and answers false) once the operation is no longer this claim's, so a
// replica that lost its lease cannot complete, fail or move the computer of an operation someone else
// now owns.

/**
 * Claims the oldest claimable operation: a pending one, or a running one whose lease expired (its
 * replica died). `SELECT … FOR UPDATE SKIP LOCKED`, so replicas claiming at once never take the same
 * one; the claim holds for `leaseMs` unless renewed. `free` says which kinds this replica has a slot
 * for: `commandType` (a command) or any other type (a lifecycle action).
 *
 * @example
 * const operation = await claimOperation(db, { token, leaseMs: 30_000, commandType: 'computer.exec', free });
 */
export async function claimOperation(
  db: Queryable,
  claim: {
    token: string;
    leaseMs: number;
    commandType: string | undefined;
    free: { lifecycle: boolean; command: boolean };
  },
): Promise<OperationRow | undefined> {
  const { rows } = await db.query<OperationRow>(
    `UPDATE operations
        SET state = 'running', claimed_by = $1, lease_until = now() + make_interval(secs => $2),
            attempts = attempts + 1, started_at = coalesce(started_at, now()), updated_at = now()
      WHERE id = (SELECT id FROM operations
                   WHERE (state = 'pending' OR (state = 'running' AND lease_until < now()))
                     AND (CASE WHEN type = $3 THEN $4::boolean ELSE $5::boolean END)
                   ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [claim.token, claim.leaseMs / 1000, claim.commandType, claim.free.command, claim.free.lifecycle],
  );
  return rows[0];
}

/**
 * Extends the claim by `leaseMs` from now; false when it is no longer this claim's.
 *
 * @example
 * if (!(await renewLease(db, operation.id, token, leaseMs))) abort();
 */
export function renewLease(
  db: Queryable,
  operationId: string,
  token: string,
  leaseMs: number,
): Promise<boolean> {
  return fenced(
    db,
    `UPDATE operations SET lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND claimed_by = $2 AND state = 'running'`,
    operationId,
    token,
    [leaseMs / 1000],
  );
}

/**
 * Ends the claim's lease now, so another replica takes the operation over at once (a shutdown).
 *
 * @example
 * await handBackLease(db, operation.id, token);
 */
export async function handBackLease(db: Queryable, operationId: string, token: string): Promise<void> {
  await db.query(
    `UPDATE operations SET lease_until = now() WHERE id = $1 AND claimed_by = $2 AND state = 'running'`,
    [operationId, token],
  );
}

/**
 * Raises the operation's progress to `percent` (never lowers it).
 *
 * @example
 * await recordProgress(db, operation.id, token, 50);
 */
export function recordProgress(
  db: Queryable,
  operationId: string,
  token: string,
  percent: number,
): Promise<boolean> {
  return fenced(
    db,
    `UPDATE operations SET progress = greatest(progress, $3), updated_at = now() WHERE id = $1 AND claimed_by = $2`,
    operationId,
    token,
    [percent],
  );
}

/**
 * Moves a created computer to `starting` while the claim still holds its create operation.
 *
 * @example
 * if (!(await markStarting(db, operation.id, token, computer.id))) throw leaseLost;
 */
export function markStarting(
  db: Queryable,
  operationId: string,
  token: string,
  computerId: string,
): Promise<boolean> {
  return fenced(
    db,
    `UPDATE computers SET state = 'starting', updated_at = now()
      WHERE id = $3 AND EXISTS (SELECT 1 FROM operations WHERE id = $1 AND claimed_by = $2 AND state = 'running')`,
    operationId,
    token,
    [computerId],
  );
}

/**
 * Forgets a `computer.exec` operation's command (its stdin is kept at rest only until it starts).
 *
 * @example
 * if (!(await clearCommand(db, operation.id, token))) throw leaseLost;
 */
export function clearCommand(db: Queryable, operationId: string, token: string): Promise<boolean> {
  return fenced(
    db,
    `UPDATE operations SET command = NULL, updated_at = now() WHERE id = $1 AND claimed_by = $2 AND state = 'running'`,
    operationId,
    token,
    [],
  );
}

/**
 * A computer's row by id, or `undefined` when it no longer exists.
 *
 * @example
 * const computer = await computerById(db, operation.target_id);
 */
export async function computerById(db: Queryable, computerId: string): Promise<ComputerRow | undefined> {
  const { rows } = await db.query<ComputerRow>('SELECT * FROM computers WHERE id = $1', [computerId]);
  return rows[0];
}

/** How an operation ends: its state, error or result, and for a lifecycle action its computer's move. */
export interface OperationEnd {
  state: 'succeeded' | 'failed';
  error: OperationRow['error'];
  result: OperationRow['result'];
  /** A lifecycle action's computer and the state it moves to (`null` for a command). */
  computer: { id: string; workspaceId: string; state: ComputerState } | null;
  /** A `computer.snapshot`'s snapshot: `ready` (with its image's bytes, when known) or `failed`. */
  snapshot?: { state: 'ready' | 'failed'; sizeBytes: number | null } | undefined;
  /**
   * A command's output not yet in its log, and the log's final event (`exit` or `failed`), appended
   * in the transaction that ends the operation: a finished operation's log is always complete.
   */
  output?: OutputEvent[] | undefined;
}

/**
 * Ends the operation once, if this claim still owns it (false otherwise), in one transaction: its
 * state, error or result; a lifecycle action's computer moves with it (and frees its place in the
 * quota on reaching `deleted`); a command's output log gets its last chunks and final event;
 * `NOTIFY svc_operation_done` wakes the long-polls of every replica.
 *
 * @example
 * const ended = await endOperation(db, operation.id, token, { state: 'succeeded', error: null, result: null, computer });
 */
export function endOperation(
  db: Database,
  operationId: string,
  token: string,
  end: OperationEnd,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE operations
          SET state = $3, progress = CASE WHEN $3 = 'succeeded' THEN 100 ELSE progress END, error = $4,
              result = $5, command = NULL, completed_at = now(), lease_until = NULL, updated_at = now()
        WHERE id = $1 AND claimed_by = $2 AND state = 'running'`,
      [operationId, token, end.state, end.error, end.result],
    );
    if (rowCount !== 1) return false;
    if (end.output) await appendEndingOutput(tx, operationId, end.output);
    if (end.snapshot)
      await tx.query(
        'UPDATE snapshots SET state = $2, size_bytes = $3, updated_at = now() WHERE operation_id = $1',
        [operationId, end.snapshot.state, end.snapshot.sizeBytes],
      );
    if (!end.computer) {
      await tx.query('SELECT pg_notify($1, $2)', [OPERATION_DONE_CHANNEL, operationId]);
      return true;
    }
    const moved = await tx.query(
      `UPDATE computers
          SET state = $2, current_operation_id = NULL, updated_at = now(),
              started_at = CASE WHEN $2 = 'running' THEN now() ELSE started_at END,
              -- Reaching running is activity: the idle timeout counts from here (design §4.1).
              last_active_at = CASE WHEN $2 = 'running' THEN greatest(last_active_at, now()) ELSE last_active_at END,
              stopped_at = CASE WHEN $2 = 'stopped' THEN now() ELSE stopped_at END,
              deleted_at = CASE WHEN $2 = 'deleted' THEN now() ELSE deleted_at END
        WHERE id = $1 AND current_operation_id = $3`,
      [end.computer.id, end.computer.state, operationId],
    );
    // Only here does a computer become `deleted`: its place in the quota is free again.
    if (end.computer.state === 'deleted' && moved.rowCount === 1)
      await releaseComputerPlace(tx, end.computer.workspaceId);
    await tx.query('SELECT pg_notify($1, $2)', [OPERATION_DONE_CHANNEL, operationId]);
    return true;
  });
}

/** Runs a write fenced by the claim (`$1` the operation, `$2` the token); whether it changed a row. */
async function fenced(
  db: Queryable,
  sql: string,
  operationId: string,
  token: string,
  extra: unknown[],
): Promise<boolean> {
  const { rowCount } = await db.query(sql, [operationId, token, ...extra]);
  return rowCount === 1;
}
