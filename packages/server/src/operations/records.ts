import type { Schema } from '@svc/contract';
import type { Queryable } from '../db/database.js';
import { ApiError, invalidArgument } from '../errors.js';
import { newId } from '../ids.js';
import { catalogueHas } from '../repositories/catalog.js';
import type { ComputerRow } from '../repositories/computers.js';
import type { OperationRow, StoredCommand } from '../repositories/operations.js';
import type { DriverAction } from './driver.js';
import { OPERATION_PENDING_CHANNEL } from './events.js';
import { assertActionAllowed, assertRunning } from './transitions.js';

/**
 * Checks an action against the computer's state and, when allowed, records a pending operation and
 * moves the computer into the action's transient state, in the caller's transaction (so it commits
 * with the idempotency record). Locks the computer row, so two concurrent actions cannot both pass.
 * Wakes the workers of every replica at commit.
 *
 * @example
 * const operation = await requestComputerAction(tx, computer.id, 'stop', principal.id);
 */
export async function requestComputerAction(
  tx: Queryable,
  computerId: string,
  action: Exclude<DriverAction, 'create'>,
  principalId: string,
): Promise<OperationRow> {
  const { rows } = await tx.query<ComputerRow>('SELECT * FROM computers WHERE id = $1 FOR UPDATE', [
    computerId,
  ]);
  const computer = rows[0];
  if (!computer) throw new ApiError('not_found', 'no such computer');
  const rule = assertActionAllowed(computer, action);
  const operation = await insertOperation(tx, computer, `computer.${action}`, principalId);
  await tx.query(
    'UPDATE computers SET state = $2, current_operation_id = $3, updated_at = now() WHERE id = $1',
    [computer.id, rule.during, operation.id],
  );
  return operation;
}

/**
 * Records a pending `computer.exec` operation for a command in a running computer, in the caller's
 * transaction (design §13). The computer's state is left alone: it must be `running` now, and the
 * worker checks again when the command starts. Locks the computer row like an action, so a stop
 * requested at the same time is ordered before or after this check.
 *
 * @example
 * const operation = await requestComputerCommand(tx, computer.id, { argv: ['make'], timeout_ms: 600_000, max_output_bytes: 65_536 }, principal.id);
 */
export async function requestComputerCommand(
  tx: Queryable,
  computerId: string,
  command: StoredCommand,
  principalId: string,
): Promise<OperationRow> {
  const { rows } = await tx.query<ComputerRow>('SELECT * FROM computers WHERE id = $1 FOR UPDATE', [
    computerId,
  ]);
  const computer = rows[0];
  if (!computer) throw new ApiError('not_found', 'no such computer');
  assertRunning(computer, 'run');
  return insertOperation(tx, computer, 'computer.exec', principalId, newId(), command);
}

/** The fields a new computer is created with. */
export interface NewComputer {
  workspace_id: string;
  name: string;
  size: string;
  image: string;
  labels: Record<string, string>;
}

/**
 * Inserts a computer in state `creating` with its pending `computer.create` operation (and the
 * worker's wake-up), in the caller's transaction: one statement, which also checks the catalogue. A
 * size or an image the catalogue lacks inserts nothing: 400 `invalid_argument` naming each (a second
 * query, on that path only). A live computer of the same name makes the insert fail (the unique index
 * `computers_live_name`, exact under concurrency): 409 `already_exists`. A workspace deleted
 * meanwhile fails its foreign key: 404 `not_found`, as it would have been a moment later.
 *
 * @example
 * const { computer, operation } = await createComputerRecord(tx, input, principal.id);
 */
export async function createComputerRecord(
  tx: Queryable,
  input: NewComputer,
  principalId: string,
): Promise<{ computer: ComputerRow; operation: OperationRow }> {
  // A size or image added to the catalogue between the insert and the check: insert again, once.
  for (let attempt = 0; attempt < 2; attempt++) {
    const created = await insertComputer(tx, input, principalId);
    if (created) return created;
    const found = await catalogueHas(tx, input.size, input.image);
    const violations = [
      ...(found.size ? [] : [{ field: 'size', description: `no size named ${input.size}; see GET /sizes` }]),
      ...(found.image
        ? []
        : [{ field: 'image', description: `no image named ${input.image}; see GET /images` }]),
    ];
    if (violations.length > 0) throw invalidArgument(violations);
  }
  throw new Error('the catalogue kept changing during a create');
}

/** The insert of {@link createComputerRecord}; `undefined` when the catalogue lacks the size or image. */
async function insertComputer(
  tx: Queryable,
  input: NewComputer,
  principalId: string,
): Promise<{ computer: ComputerRow; operation: OperationRow } | undefined> {
  // The operation comes back as JSON beside the computer's columns (rows of two tables in one
  // answer); its timestamps are read back into Dates.
  const { rows } = await tx
    .query<ComputerRow & { operation: Record<string, unknown> }>(
      `WITH computer AS (
         INSERT INTO computers (id, workspace_id, name, state, size, image, labels, current_operation_id, created_by)
         SELECT $1::text, $2::text, $3::text, 'creating', $4::text, $5::text, $6::jsonb, $7::text, $8::text
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

async function insertOperation(
  tx: Queryable,
  computer: ComputerRow,
  type: Schema<'OperationType'>,
  principalId: string,
  id = newId(),
  command: StoredCommand | null = null,
): Promise<OperationRow> {
  // The row and the worker's wake-up in one round trip; the notification is delivered at commit.
  const { rows } = await tx.query<OperationRow>(
    `WITH operation AS (
       INSERT INTO operations (id, workspace_id, type, target_type, target_id, created_by, command)
       VALUES ($1, $2, $3, 'computer', $4, $5, $6) RETURNING *
     ), wake AS (SELECT pg_notify($7, $1))
     SELECT operation.* FROM operation, wake`,
    [id, computer.workspace_id, type, computer.id, principalId, command, OPERATION_PENDING_CHANNEL],
  );
  return rows[0] as OperationRow;
}
