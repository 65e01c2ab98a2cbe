import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import { isId } from '../../platform/ids.js';
import { ownerPage } from '../../platform/repositories/keyset.js';

/** A `snapshots` row (design §4.2). */
export interface SnapshotRow {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  state: Schema<'SnapshotState'>;
  computer_id: string;
  image: string;
  /** Bytes of the engine's image, once `ready` (bigint: read back as text by node-postgres). */
  size_bytes: string | number | null;
  operation_id: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  /** The host whose Engine keeps the image (design §4.4): its computer's; null without hosts. */
  host_id: string | null;
}

/** The fields a new snapshot is created with. */
export interface NewSnapshot {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  computer_id: string;
  image: string;
  operation_id: string;
  created_by: string;
}

/**
 * Inserts a snapshot in state `creating`. A snapshot of the same name in the workspace fails the
 * unique key: 409 `already_exists`.
 *
 * @example
 * const snapshot = await insertSnapshot(tx, { id, workspace_id, name, description: null, computer_id, image, operation_id, created_by });
 */
export async function insertSnapshot(db: Queryable, input: NewSnapshot): Promise<SnapshotRow> {
  const { rows } = await db
    .query<SnapshotRow>(
      `INSERT INTO snapshots (id, workspace_id, name, description, computer_id, image, operation_id, created_by, host_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, (SELECT host_id FROM computers WHERE id = $5)) RETURNING *`,
      [
        input.id,
        input.workspace_id,
        input.name,
        input.description,
        input.computer_id,
        input.image,
        input.operation_id,
        input.created_by,
      ],
    )
    .catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code === '23505')
        throw new ApiError(
          'already_exists',
          `a snapshot named ${input.name} already exists in this workspace`,
          {
            cause: error,
          },
        );
      throw error;
    });
  return rows[0] as SnapshotRow;
}

/**
 * A snapshot of the workspace by id or name; 404 `not_found` otherwise (a snapshot of another
 * workspace too, so existence never leaks). `lock` locks its row.
 *
 * @example
 * const snapshot = await snapshotIn(ctx.db, workspace.id, ctx.path.snapshot);
 */
export async function snapshotIn(
  db: Queryable,
  workspaceId: string,
  ref: string,
  options: { lock?: boolean } = {},
): Promise<SnapshotRow> {
  const column = isId(ref) ? 'id' : 'name';
  const { rows } = await db.query<SnapshotRow>(
    `SELECT * FROM snapshots WHERE workspace_id = $1 AND ${column} = $2${options.lock ? ' FOR UPDATE' : ''}`,
    [workspaceId, ref],
  );
  if (!rows[0]) throw new ApiError('not_found', `snapshot ${ref} not found in this workspace`);
  return rows[0];
}

/**
 * One page of a workspace's snapshots, newest first: `limit` rows after the keyset `after`.
 *
 * @example
 * const rows = await listSnapshotRows(ctx.db, { workspaceId, state: null, after: null, limit: 51 });
 */
export async function listSnapshotRows(
  db: Queryable,
  filter: { workspaceId: string; state: string | null; after: string | null; limit: number },
): Promise<SnapshotRow[]> {
  const page = ownerPage('workspace_id', '$1');
  const { rows } = await db.query<SnapshotRow>(
    `SELECT * FROM snapshots
      WHERE ${page.where} AND ($2::text IS NULL OR state = $2) AND ($3::text IS NULL OR id < $3)
      ORDER BY ${page.order} LIMIT $4`,
    [filter.workspaceId, filter.state, filter.after, filter.limit],
  );
  return rows;
}

/** Every snapshot of a workspace (deleting the workspace removes their images first). */
export async function workspaceSnapshots(db: Queryable, workspaceId: string): Promise<SnapshotRow[]> {
  const { rows } = await db.query<SnapshotRow>('SELECT * FROM snapshots WHERE workspace_id = $1', [
    workspaceId,
  ]);
  return rows;
}

/** How many snapshots the workspace holds, whatever their state (the quota). */
export async function countSnapshots(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::integer AS n FROM snapshots WHERE workspace_id = $1',
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
}

/** The snapshot that the `computer.snapshot` operation makes; `undefined` when it was deleted. */
export async function snapshotOfOperation(
  db: Queryable,
  operationId: string,
): Promise<SnapshotRow | undefined> {
  const { rows } = await db.query<SnapshotRow>('SELECT * FROM snapshots WHERE operation_id = $1', [
    operationId,
  ]);
  return rows[0];
}

/** Deletes a snapshot's row. */
export async function deleteSnapshotRow(db: Queryable, snapshotId: string): Promise<void> {
  await db.query('DELETE FROM snapshots WHERE id = $1', [snapshotId]);
}
