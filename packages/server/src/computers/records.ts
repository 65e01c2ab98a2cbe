import type { Schema } from '@svc/contract';
import type { Queryable } from '../platform/db/database.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import type { DriverAction } from './driver.js';
import { catalogueHas } from './repositories/catalog.js';
import type { ComputerRow } from './repositories/computers.js';
import {
  insertComputer,
  insertOperation,
  lockComputer,
  type NewComputer,
  setComputerOperation,
} from './repositories/operations/records.js';
import type { OperationRow, StoredCommand } from './repositories/operations.js';
import { assertActionAllowed, assertRunning, assertSnapshotAllowed } from './transitions.js';

/**
 * Checks an action against the computer's state and, when allowed, records a pending operation and
 * moves the computer into the action's transient state, in the caller's transaction (so it commits
 * with the idempotency record). Locks the computer row, so two concurrent actions cannot both pass.
 * Wakes the workers of every replica at commit. `trigger` marks an operation the service started by
 * itself (the lifetime check, design §4.1); `principalId` is then the computer's creator.
 *
 * @example
 * const operation = await requestComputerAction(tx, computer.id, 'stop', principal.id);
 */
export async function requestComputerAction(
  tx: Queryable,
  computerId: string,
  action: Exclude<DriverAction, 'create'>,
  principalId: string,
  options: { trigger?: Schema<'OperationTrigger'> } = {},
): Promise<OperationRow> {
  const computer = await lockComputer(tx, computerId);
  if (!computer) throw new ApiError('not_found', 'no such computer');
  const rule = assertActionAllowed(computer, action);
  const operation = await insertOperation(
    tx,
    computer,
    `computer.${action}`,
    principalId,
    newId(),
    null,
    options.trigger ?? null,
  );
  await setComputerOperation(tx, computer.id, rule.during, operation.id);
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
  const computer = await lockComputer(tx, computerId);
  if (!computer) throw new ApiError('not_found', 'no such computer');
  assertRunning(computer, 'run');
  return insertOperation(tx, computer, 'computer.exec', principalId, newId(), command);
}

/**
 * Records a pending `computer.snapshot` operation (design §4.2), in the caller's transaction. The
 * computer's state is left alone: it must be `running` or `stopped` now (409 `invalid_state`; 409
 * `operation_in_progress` while an operation holds it), and the worker checks again when the copy
 * starts. Locks the computer row like an action.
 *
 * @example
 * const operation = await requestComputerSnapshot(tx, computer.id, principal.id);
 */
export async function requestComputerSnapshot(
  tx: Queryable,
  computerId: string,
  principalId: string,
): Promise<{ computer: ComputerRow; operation: OperationRow }> {
  const computer = await lockComputer(tx, computerId);
  if (!computer) throw new ApiError('not_found', 'no such computer');
  assertSnapshotAllowed(computer);
  const operation = await insertOperation(tx, computer, 'computer.snapshot', principalId, newId());
  return { computer, operation };
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
