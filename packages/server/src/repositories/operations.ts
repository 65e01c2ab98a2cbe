import type { Queryable } from '../db/database.js';
import type { OperationRow } from '../operations/records.js';
import { ownerPage } from './keyset.js';

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
