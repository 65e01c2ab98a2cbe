import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import { ownerPage } from '../../platform/repositories/keyset.js';
import type { OperationState } from '../states.js';

/** The NOTIFY channel carrying ids of operations that reached a final state. */
export const OPERATION_DONE_CHANNEL = 'svc_operation_done';
/** The NOTIFY channel carrying ids of new pending operations (wakes the workers of every replica). */
export const OPERATION_PENDING_CHANNEL = 'svc_operation_pending';

/** An `operations` row. */
export interface OperationRow {
  id: string;
  workspace_id: string;
  type: Schema<'OperationType'>;
  state: OperationState;
  target_type: string;
  target_id: string;
  created_by: string;
  /** Why the service started it by itself (design §4.1); `null` for one a request started. */
  trigger: Schema<'OperationTrigger'> | null;
  progress: number;
  error: { code: string; message: string; details: Record<string, unknown> } | null;
  /** A `computer.exec` operation's request, kept only until the worker starts the command. */
  command: StoredCommand | null;
  /** What a `computer.exec` operation's command returned (the spec's `LongExecution`). */
  result: { execution: Schema<'LongExecution'> } | null;
  claimed_by: string | null;
  lease_until: Date | null;
  attempts: number;
  started_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A command as a `computer.exec` operation stores it until it starts (stdin in base64). */
export interface StoredCommand {
  argv: string[];
  stdin_base64?: string;
  timeout_ms: number;
  max_output_bytes: number;
}

/** One page of a workspace's operations, newest first, filtered by state and target. */
export async function listOperationRows(
  db: Queryable,
  filter: {
    workspaceId: string;
    state: string | null;
    targetId: string | null;
    after: string | null;
    limit: number;
  },
): Promise<OperationRow[]> {
  const page = ownerPage('workspace_id', '$1');
  const { rows } = await db.query<OperationRow>(
    `SELECT * FROM operations
      WHERE ${page.where} AND ($2::text IS NULL OR state = $2) AND ($3::text IS NULL OR target_id = $3)
        AND ($4::text IS NULL OR id < $4)
      ORDER BY ${page.order} LIMIT $5`,
    [filter.workspaceId, filter.state, filter.targetId, filter.after, filter.limit],
  );
  return rows;
}

/** The workspace of an operation, or `undefined` when there is no such operation. */
export async function operationWorkspace(db: Queryable, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ workspace_id: string }>(
    'SELECT workspace_id FROM operations WHERE id = $1',
    [id],
  );
  return rows[0]?.workspace_id;
}

/**
 * An operation by id, or `undefined` when there is no such operation.
 *
 * @example
 * const operation = await operationById(db, id);
 */
export async function operationById(db: Queryable, id: string): Promise<OperationRow | undefined> {
  const { rows } = await db.query<OperationRow>('SELECT * FROM operations WHERE id = $1', [id]);
  return rows[0];
}

/** The operations waiting or running now, as the metrics show them. */
export interface OperationQueue {
  pending: number;
  /** Running under a live lease. */
  running: number;
  /** Running under an expired lease: its replica died, another will take it over. */
  stalled: number;
  /** Seconds since the oldest pending operation was created (0: none is pending). */
  lag: number;
}

/**
 * The queue of operations now: one aggregate over the pending and running ones.
 *
 * @example
 * const { pending, lag } = (await operationQueue(db)) ?? { pending: 0, lag: 0 };
 */
export async function operationQueue(db: Queryable): Promise<OperationQueue | undefined> {
  const { rows } = await db.query<OperationQueue>(
    `SELECT count(*) FILTER (WHERE state = 'pending') AS pending,
            count(*) FILTER (WHERE state = 'running' AND lease_until >= now()) AS running,
            count(*) FILTER (WHERE state = 'running' AND lease_until < now()) AS stalled,
            coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE state = 'pending')), 0)::float8 AS lag
       FROM operations WHERE state IN ('pending', 'running')`,
  );
  const row = rows[0];
  return row
    ? {
        pending: Number(row.pending),
        running: Number(row.running),
        stalled: Number(row.stalled),
        lag: Number(row.lag),
      }
    : undefined;
}
