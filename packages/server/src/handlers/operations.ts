import { waitForOperation } from '../computers/events.js';
import { renderOperation } from '../computers/render.js';
import { listOperationRows, operationWorkspace } from '../computers/repositories/operations.js';
import { allows, workspaceAccess } from '../identity/access.js';
import type { Role } from '../identity/roles.js';
import { ApiError } from '../platform/errors.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { permittedWorkspace } from './common.js';
import type { OperationDeps } from './deps.js';
import type { Handler } from './types.js';

/** The most `?wait=` may hold a request (design §5; the spec caps the parameter at 60). */
export const MAX_WAIT_SECONDS = 60;

export const listOperations: Handler<'listOperations', OperationDeps> = async (ctx) => {
  const { workspace, role } = await permittedWorkspace(ctx);
  const { state, target_id } = ctx.query;
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listOperations',
    workspace: workspace.id,
    state: state ?? null,
    target_id: target_id ?? null,
  });
  const rows = await listOperationRows(ctx.db, {
    workspaceId: workspace.id,
    state: state ?? null,
    targetId: target_id ?? null,
    after: page.after,
    limit: page.limit + 1,
  });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return {
    status: 200,
    body: {
      operations: items.map((row) => renderOperation(row, { result: allows(role, 'exec') })),
      next_cursor,
      has_more,
    },
  };
};

/**
 * One operation, readable by members of its workspace (404 for anyone else). `?wait=N` holds until
 * it is final or N seconds pass, then answers as it stands.
 */
export const getOperation: Handler<'getOperation', OperationDeps> = async (ctx) => {
  const id = ctx.path.operation;
  const workspaceId = await operationWorkspace(ctx.db, id);
  const notFound = () => new ApiError('not_found', `operation ${id} not found`);
  if (!workspaceId) throw notFound();
  let role: Role;
  try {
    ({ role } = await workspaceAccess(ctx.db, ctx.access, workspaceId, ctx.permission));
  } catch (error) {
    throw error instanceof ApiError && error.code === 'not_found' ? notFound() : error;
  }
  const waitMs = Math.min(ctx.query.wait ?? 0, MAX_WAIT_SECONDS) * 1000;
  const operation = await waitForOperation(ctx.db, ctx.deps.events, id, waitMs, { pollMs: 500 });
  if (!operation) throw notFound();
  return { status: 200, body: { operation: renderOperation(operation, { result: allows(role, 'exec') }) } };
};

export const operationHandlers = { listOperations, getOperation };
