import type { ComputerSnapshots } from '../computers/driver.js';
import { requestComputerSnapshot } from '../computers/records.js';
import { renderOperation, renderSnapshot } from '../computers/render.js';
import { computerIn } from '../computers/repositories/computers.js';
import {
  countSnapshots,
  deleteSnapshotRow,
  insertSnapshot,
  listSnapshotRows,
  type SnapshotRow,
  snapshotIn,
} from '../computers/repositories/snapshots.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { API_PREFIX, checkName, permittedWorkspace, quotaExceeded } from './common.js';
import type { SnapshotDeps, SnapshotStoreDeps } from './deps.js';
import type { Handler } from './types.js';

/** The driver's snapshots, or 503 `unavailable` when this driver keeps none. */
export function snapshotStore(deps: SnapshotStoreDeps): ComputerSnapshots {
  const store = deps.driver.snapshots;
  if (!store)
    throw new ApiError('unavailable', `the ${deps.driver.name} driver keeps no snapshots`, {
      headers: { 'retry-after': '60' },
    });
  return store;
}

export const listSnapshots: Handler<'listSnapshots', SnapshotDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const state = ctx.query.state ?? null;
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listSnapshots',
    workspace: workspace.id,
    state,
  });
  const rows = await listSnapshotRows(ctx.db, {
    workspaceId: workspace.id,
    state,
    after: page.after,
    limit: page.limit + 1,
  });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { snapshots: items.map(renderSnapshot), next_cursor, has_more } };
};

export const getSnapshot: Handler<'getSnapshot', SnapshotDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const snapshot = await snapshotIn(ctx.db, workspace.id, ctx.path.snapshot);
  return { status: 200, body: { snapshot: renderSnapshot(snapshot) } };
};

/**
 * Takes a snapshot of a computer: 202 with the snapshot (`creating`) and its `computer.snapshot`
 * operation. The workspace's row lock orders concurrent creates, so the quota's count is exact.
 */
export const createSnapshot: Handler<'createSnapshot', SnapshotDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx, { lock: true });
  await ctx.countMutation(workspace.id);
  const { name, computer: computerRef, description } = ctx.body;
  checkName(name);
  snapshotStore(ctx.deps);
  const limit = ctx.deps.config.quotas.snapshotsPerWorkspace;
  if ((await countSnapshots(ctx.db, workspace.id)) >= limit)
    throw quotaExceeded(
      'snapshots_per_workspace',
      limit,
      `workspace ${workspace.name} already has ${limit} snapshots`,
    );
  const found = await computerIn(ctx.db, workspace.id, computerRef);
  const { computer, operation } = await requestComputerSnapshot(ctx.db, found.id, ctx.principal.id);
  const snapshot = await insertSnapshot(ctx.db, {
    id: newId(),
    workspace_id: workspace.id,
    name,
    description: description ?? null,
    computer_id: computer.id,
    image: computer.image,
    operation_id: operation.id,
    created_by: ctx.principal.id,
  });
  return {
    status: 202,
    body: { snapshot: renderSnapshot(snapshot), operations: [renderOperation(operation, { result: true })] },
    headers: { location: `${API_PREFIX}/operations/${operation.id}`, 'retry-after': '1' },
  };
};

/**
 * Deletes a snapshot: its image leaves the engine first (a snapshot already gone there is fine), then
 * its row. 409 `invalid_state` while it is `creating`.
 */
export const deleteSnapshot: Handler<'deleteSnapshot', SnapshotDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const snapshot = await snapshotIn(ctx.db, workspace.id, ctx.path.snapshot, { lock: true });
  assertNotCreating(snapshot);
  await snapshotStore(ctx.deps).remove(snapshot, ctx.request.signal);
  await deleteSnapshotRow(ctx.db, snapshot.id);
  return { status: 204, body: undefined };
};

/** 409 `invalid_state` while the snapshot is being made (its operation still writes it). */
function assertNotCreating(snapshot: SnapshotRow): void {
  if (snapshot.state === 'creating')
    throw new ApiError(
      'invalid_state',
      `snapshot ${snapshot.name} is creating; wait for its operation, then delete it`,
      { details: { current_state: 'creating', allowed_from: ['ready', 'failed'] } },
    );
}

/**
 * The snapshot a computer create names (design §4.2): a `ready` one of this workspace, read under a
 * share lock so a delete waits for the create's commit. Anything else is 400 `invalid_argument`
 * naming `snapshot`, another workspace's too (it is not found here, and existence does not leak).
 */
export async function snapshotForCreate(
  ctx: { db: Parameters<typeof snapshotIn>[0] },
  workspaceId: string,
  ref: string,
): Promise<SnapshotRow> {
  const snapshot = await snapshotIn(ctx.db, workspaceId, ref, { lock: true }).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'not_found')
      throw invalidArgument([{ field: 'snapshot', description: `no snapshot ${ref} in this workspace` }]);
    throw error;
  });
  if (snapshot.state !== 'ready')
    throw invalidArgument([
      {
        field: 'snapshot',
        description: `snapshot ${snapshot.name} is ${snapshot.state}; computers are created from ready snapshots`,
      },
    ]);
  return snapshot;
}

export const snapshotHandlers = { listSnapshots, getSnapshot, createSnapshot, deleteSnapshot };
