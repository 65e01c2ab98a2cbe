import type { Schema } from '@svc/contract';
import type { Queryable } from '../../../platform/db/database.js';
import { ApiError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import type { ComputerState } from '../../states.js';
import type { ComputerRow } from '../computers.js';
import { OPERATION_PENDING_CHANNEL, type OperationRow, type StoredCommand } from '../operations.js';

// The statements behind operations/records.ts: what requesting a computer operation writes, in the
// request's transaction. Each new operation wakes the workers of every replica at commit.

/**
 * The computer's row, locked until the transaction ends (two concurrent requests for one computer
 * are ordered); `undefined` when there is no such computer.
 *
 * @example
 * const computer = await lockComputer(tx, computerId);
 */
export async function lockComputer(tx: Queryable, computerId: string): Promise<ComputerRow | undefined> {
  const { rows } = await tx.query<ComputerRow>('SELECT * FROM computers WHERE id = $1 FOR UPDATE', [
    computerId,
  ]);
  return rows[0];
}

/**
 * Moves the computer into `state` (an action's transient state) with `operationId` as its operation.
 *
 * @example
 * await setComputerOperation(tx, computer.id, 'stopping', operation.id);
 */
export async function setComputerOperation(
  tx: Queryable,
  computerId: string,
  state: ComputerState,
  operationId: string,
): Promise<void> {
  await tx.query(
    'UPDATE computers SET state = $2, current_operation_id = $3, updated_at = now() WHERE id = $1',
    [computerId, state, operationId],
  );
}

/** The fields a new computer is created with. */
export interface NewComputer {
  workspace_id: string;
  name: string;
  size: string;
  image: string;
  labels: Record<string, string>;
  /** The snapshot it is created from (design §4.2): `image` is then the snapshot's. */
  snapshot_id?: string | null;
  /** Its lifetime, the workspace's defaults already applied (design §4.1); none when left out. */
  idle_timeout_seconds?: number | null;
  expires_at?: Date | null;
  on_end?: 'stop' | 'delete';
}

/**
 * Inserts a computer in state `creating` with its pending `computer.create` operation (and the
 * worker's wake-up), in one statement that also checks the catalogue; `undefined` when the catalogue
 * lacks the size or the image. A live computer of the same name fails the insert (the unique index
 * `computers_live_name`): 409 `already_exists`; a workspace deleted meanwhile fails its foreign key:
 * 404 `not_found`.
 *
 * @example
 * const created = await insertComputer(tx, input, principal.id); // undefined: not in the catalogue
 */
export async function insertComputer(
  tx: Queryable,
  input: NewComputer,
  principalId: string,
): Promise<{ computer: ComputerRow; operation: OperationRow } | undefined> {
  // The operation comes back as JSON beside the computer's columns (rows of two tables in one
  // answer); its timestamps are read back into Dates.
  const { rows } = await tx
    .query<ComputerRow & { operation: Record<string, unknown> }>(
      `WITH computer AS (
         INSERT INTO computers (id, workspace_id, name, state, size, image, labels, current_operation_id, created_by,
                                idle_timeout_seconds, expires_at, on_end, snapshot_id)
         SELECT $1::text, $2::text, $3::text, 'creating', $4::text, $5::text, $6::jsonb, $7::text, $8::text,
                $10::integer, $11::timestamptz, $12::text, $13::text
          WHERE EXISTS (SELECT 1 FROM sizes WHERE name = $4) AND EXISTS (SELECT 1 FROM images WHERE name = $5)
         RETURNING *
       ), operation AS (
         INSERT INTO operations (id, workspace_id, type, target_type, target_id, created_by)
         SELECT current_operation_id, workspace_id, 'computer.create', 'computer', id, created_by FROM computer
         RETURNING *
       ), wake AS (SELECT pg_notify($9, id) FROM operation)
       SELECT computer.*, to_jsonb(operation) AS operation FROM computer, operation, wake`,
      [
        newId(),
        input.workspace_id,
        input.name,
        input.size,
        input.image,
        input.labels,
        newId(),
        principalId,
        OPERATION_PENDING_CHANNEL,
        input.idle_timeout_seconds ?? null,
        input.expires_at ?? null,
        input.on_end ?? 'stop',
        input.snapshot_id ?? null,
      ],
    )
    .catch((error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === '23505')
        throw new ApiError(
          'already_exists',
          `a computer named ${input.name} already exists in this workspace`,
          {
            cause: error,
          },
        );
      if (code === '23503')
        throw new ApiError('not_found', `workspace ${input.workspace_id} not found`, { cause: error });
      throw error;
    });
  const row = rows[0];
  if (!row) return undefined;
  const { operation, ...computer } = row;
  return { computer, operation: operationFromJson(operation) };
}

const OPERATION_TIMES = ['lease_until', 'started_at', 'completed_at', 'created_at', 'updated_at'] as const;

/** An operations row read back from `to_jsonb`: timestamps as Dates, as a plain query returns them. */
function operationFromJson(json: Record<string, unknown>): OperationRow {
  const row = { ...json };
  for (const column of OPERATION_TIMES) {
    const value = row[column];
    row[column] = typeof value === 'string' ? new Date(value) : null;
  }
  return row as unknown as OperationRow;
}

/**
 * Inserts a pending operation on the computer (a `computer.exec` one with its `command`), with the
 * workers' wake-up.
 *
 * @example
 * const operation = await insertOperation(tx, computer, 'computer.stop', principal.id);
 */
export async function insertOperation(
  tx: Queryable,
  computer: ComputerRow,
  type: Schema<'OperationType'>,
  principalId: string,
  id = newId(),
  command: StoredCommand | null = null,
  trigger: Schema<'OperationTrigger'> | null = null,
): Promise<OperationRow> {
  // The row and the worker's wake-up in one round trip; the notification is delivered at commit.
  const { rows } = await tx.query<OperationRow>(
    `WITH operation AS (
       INSERT INTO operations (id, workspace_id, type, target_type, target_id, created_by, command, trigger)
       VALUES ($1, $2, $3, 'computer', $4, $5, $6, $8) RETURNING *
     ), wake AS (SELECT pg_notify($7, $1))
     SELECT operation.* FROM operation, wake`,
    [id, computer.workspace_id, type, computer.id, principalId, command, OPERATION_PENDING_CHANNEL, trigger],
  );
  return rows[0] as OperationRow;
}
