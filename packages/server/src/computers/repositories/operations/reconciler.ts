import type { Queryable } from '../../../platform/db/database.js';
import type { ComputerState } from '../../states.js';

// The statements of the Docker reconciler (operations/docker/reconciler.ts): computers at rest
// (`running` or `stopped`, no operation in progress, not deleted), read with a version and moved by a
// compare-and-set on it, so a computer an operation touched in between is left to that operation.

/** A computer at rest as the reconciler reads it. */
export interface ComputerSnapshot {
  id: string;
  state: ComputerState;
  /** `updated_at` in microseconds, as text: a JS Date would drop the microseconds the compare needs. */
  version: string;
}

const VERSION = '(extract(epoch FROM updated_at) * 1000000)::bigint';

/**
 * Every computer at rest on host `hostId` (null: computers without a host). `unknown` counts as at
 * rest: a host that answers again has its computers compared with their containers.
 *
 * @example
 * const rows = await restingComputers(db, host.id);
 */
export async function restingComputers(
  db: Queryable,
  hostId: string | null = null,
): Promise<ComputerSnapshot[]> {
  const { rows } = await db.query<ComputerSnapshot>(
    `SELECT id, state, ${VERSION}::text AS version FROM computers
      WHERE state IN ('running', 'stopped', 'unknown') AND current_operation_id IS NULL AND deleted_at IS NULL
        AND host_id IS NOT DISTINCT FROM $1`,
    [hostId],
  );
  return rows;
}

/**
 * One computer, when it is at rest on host `hostId` (null: without a host). A computer a drain moved
 * to another host is not this host's any more: the removal of its old container must not touch it.
 *
 * @example
 * const row = await restingComputer(db, computerId, host.id); // undefined: gone, busy, deleted or elsewhere
 */
export async function restingComputer(
  db: Queryable,
  computerId: string,
  hostId: string | null = null,
): Promise<ComputerSnapshot | undefined> {
  const { rows } = await db.query<ComputerSnapshot>(
    `SELECT id, state, ${VERSION}::text AS version FROM computers
      WHERE id = $1 AND state IN ('running', 'stopped', 'unknown') AND current_operation_id IS NULL AND deleted_at IS NULL
        AND host_id IS NOT DISTINCT FROM $2`,
    [computerId, hostId],
  );
  return rows[0];
}

/**
 * Moves a computer from the snapshot's state to `state`, only if its row is still the snapshot's (same
 * state, same version, no operation); whether it moved.
 *
 * @example
 * const moved = await settleComputer(db, row, 'stopped');
 */
export async function settleComputer(
  db: Queryable,
  row: ComputerSnapshot,
  state: ComputerState,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE computers
        SET state = $3, updated_at = now(),
            started_at = CASE WHEN $3 = 'running' THEN now() ELSE started_at END,
            stopped_at = CASE WHEN $3 = 'stopped' THEN now() ELSE stopped_at END
      WHERE id = $1 AND state = $2 AND ${VERSION} = $4::bigint AND current_operation_id IS NULL`,
    [row.id, row.state, state, row.version],
  );
  return rowCount === 1;
}
