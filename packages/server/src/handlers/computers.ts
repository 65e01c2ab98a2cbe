import { workspaceAccess } from '../access.js';
import type { Queryable } from '../db/database.js';
import { ApiError, invalidArgument } from '../errors.js';
import { DELETED_COMPUTER_RETENTION_DAYS } from '../housekeeping.js';
import { isId } from '../ids.js';
import type { ComputerRow, OperationRow } from '../operations/records.js';
import { createComputerRecord, requestComputerAction } from '../operations/records.js';
import { pageRequest, toPage } from '../paging.js';
import { renderComputer, renderOperation } from '../render.js';
import { API_PREFIX, checkName, quotaExceeded } from './common.js';
import type { AppDeps, Ctx, Handler } from './types.js';

/** Deleted computers answer by id for 7 days (design §4); by name only live ones (the name is freed). */
const VISIBLE = `(state <> 'deleted' OR deleted_at > now() - make_interval(days => ${DELETED_COMPUTER_RETENTION_DAYS}))`;

export async function computerIn(
  db: Queryable,
  workspaceId: string,
  ref: string,
  options: { lock?: boolean } = {},
): Promise<ComputerRow> {
  const where = isId(ref) ? `id = $2 AND ${VISIBLE}` : 'name = $2 AND deleted_at IS NULL';
  const { rows } = await db.query<ComputerRow>(
    `SELECT * FROM computers WHERE workspace_id = $1 AND ${where}${options.lock ? ' FOR UPDATE' : ''}`,
    [workspaceId, ref],
  );
  if (!rows[0]) throw new ApiError('not_found', `computer ${ref} not found in this workspace`);
  return rows[0];
}

function checkLabels(deps: AppDeps, labels: Record<string, string> | undefined): void {
  if (!labels) return;
  const limit = deps.config.quotas.labelsPerComputer;
  const count = Object.keys(labels).length;
  // The spec's details.quota has no value for labels yet; `limit` says what the quota is.
  if (count > limit) throw quotaExceeded(undefined, limit, `a computer may carry at most ${limit} labels`);
  for (const [key, value] of Object.entries(labels)) {
    checkName(key, `labels.${key}`);
    checkName(value, `labels.${key}`);
  }
}

async function catalogued(db: Queryable, size: string, image: string): Promise<void> {
  const { rows } = await db.query<{ size: boolean; image: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM sizes WHERE name = $1) AS size, EXISTS (SELECT 1 FROM images WHERE name = $2) AS image`,
    [size, image],
  );
  const violations = [
    ...(rows[0]?.size ? [] : [{ field: 'size', description: `no size named ${size}; see GET /sizes` }]),
    ...(rows[0]?.image ? [] : [{ field: 'image', description: `no image named ${image}; see GET /images` }]),
  ];
  if (violations.length > 0) throw invalidArgument(violations);
}

export function accepted(operations: OperationRow[]): { location: string; 'retry-after': string } {
  return { location: `${API_PREFIX}/operations/${operations[0]?.id}`, 'retry-after': '1' };
}

export const listComputers: Handler<'listComputers'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  const { state, label, include_deleted } = ctx.query;
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listComputers',
    workspace: workspace.id,
    state: state ?? null,
    label: label ?? null,
    include_deleted: include_deleted === true,
  });
  const selector = label === undefined ? null : Object.fromEntries([label.split('=') as [string, string]]);
  const { rows } = await ctx.db.query<ComputerRow>(
    `SELECT * FROM computers
      WHERE workspace_id = $1 AND ${VISIBLE} AND ($2::text IS NULL OR state = $2) AND ($3::jsonb IS NULL OR labels @> $3)
        AND ($4 OR state <> 'deleted') AND ($5::text IS NULL OR id < $5)
      ORDER BY id DESC LIMIT $6`,
    [workspace.id, state ?? null, selector, include_deleted === true, page.after, page.limit + 1],
  );
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { computers: items.map(renderComputer), next_cursor, has_more } };
};

export const getComputer: Handler<'getComputer'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  return {
    status: 200,
    body: { computer: renderComputer(await computerIn(ctx.db, workspace.id, ctx.path.computer)) },
  };
};

/** Creates a computer and starts it: 202 with the computer (`creating`) and its `computer.create` operation. */
export const createComputer: Handler<'createComputer'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'computers', {
    lock: true,
  });
  await ctx.countMutation(workspace.id);
  const { name, size, image, labels } = ctx.body;
  checkName(name);
  checkLabels(ctx.deps, labels);
  await catalogued(ctx.db, size, image);
  const limit = ctx.deps.config.quotas.computersPerWorkspace;
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM computers WHERE workspace_id = $1 AND state <> 'deleted'`,
    [workspace.id],
  );
  if ((rows[0]?.n ?? 0) >= limit)
    throw quotaExceeded(
      'computers_per_workspace',
      limit,
      `workspace ${workspace.name} already has ${limit} live computers`,
    );
  const taken = await ctx.db.query(
    'SELECT 1 FROM computers WHERE workspace_id = $1 AND name = $2 AND deleted_at IS NULL',
    [workspace.id, name],
  );
  if (taken.rowCount > 0)
    throw new ApiError('already_exists', `a computer named ${name} already exists in this workspace`);
  const { computer, operation } = await createComputerRecord(
    ctx.db,
    { workspace_id: workspace.id, name, size, image, labels: labels ?? {} },
    ctx.principal.id,
  );
  return {
    status: 202,
    body: { computer: renderComputer(computer), operations: [renderOperation(operation, { result: true })] },
    headers: accepted([operation]),
  };
};

/** Renames or re-labels a computer, in any state but `deleted`. */
export const updateComputer: Handler<'updateComputer'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'computers');
  await ctx.countMutation(workspace.id);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer, { lock: true });
  if (computer.state === 'deleted')
    throw new ApiError('invalid_state', `computer ${computer.name} is deleted`, {
      details: { current_state: 'deleted' },
    });
  checkName(ctx.body.name);
  checkLabels(ctx.deps, ctx.body.labels);
  if (ctx.body.name !== undefined && ctx.body.name !== computer.name) {
    const taken = await ctx.db.query(
      'SELECT 1 FROM computers WHERE workspace_id = $1 AND name = $2 AND deleted_at IS NULL',
      [workspace.id, ctx.body.name],
    );
    if (taken.rowCount > 0)
      throw new ApiError(
        'already_exists',
        `a computer named ${ctx.body.name} already exists in this workspace`,
      );
  }
  const { rows } = await ctx.db.query<ComputerRow>(
    `UPDATE computers SET name = coalesce($2, name), labels = coalesce($3, labels), updated_at = now()
      WHERE id = $1 RETURNING *`,
    [computer.id, ctx.body.name ?? null, ctx.body.labels ?? null],
  );
  return { status: 200, body: { computer: renderComputer(rows[0] as ComputerRow) } };
};

type ActionOp = 'startComputer' | 'stopComputer' | 'restartComputer' | 'deleteComputer';

/** start/stop/restart/delete: one operation, or 409 `invalid_state` / `operation_in_progress`. */
async function act(ctx: Ctx<ActionOp>, name: 'start' | 'stop' | 'restart' | 'delete') {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'computers');
  await ctx.countMutation(workspace.id);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer);
  const operation = await requestComputerAction(ctx.db, computer.id, name, ctx.principal.id);
  return {
    status: 202 as const,
    body: { operations: [renderOperation(operation, { result: true })] },
    headers: accepted([operation]),
  };
}

export const startComputer: Handler<'startComputer'> = (ctx) => act(ctx, 'start');
export const stopComputer: Handler<'stopComputer'> = (ctx) => act(ctx, 'stop');
export const restartComputer: Handler<'restartComputer'> = (ctx) => act(ctx, 'restart');
export const deleteComputer: Handler<'deleteComputer'> = (ctx) => act(ctx, 'delete');

export const computerHandlers = {
  listComputers,
  getComputer,
  createComputer,
  updateComputer,
  startComputer,
  stopComputer,
  restartComputer,
  deleteComputer,
};
