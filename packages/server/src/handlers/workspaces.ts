import type { WorkspaceRow } from '../access.js';
import { workspaceAccess } from '../access.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { pageRequest, toPage } from '../paging.js';
import { renderWorkspace } from '../render.js';
import { API_PREFIX, checkName, quotaExceeded } from './common.js';
import type { Handler } from './types.js';

const COLUMNS = 'w.id, w.name, w.display_name, w.created_by, w.created_at, w.updated_at';

/** The caller's workspaces (any role), newest first. */
export const listWorkspaces: Handler<'listWorkspaces'> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listWorkspaces',
    principal: ctx.principal.id,
  });
  const { rows } = await ctx.db.query<WorkspaceRow>(
    `SELECT ${COLUMNS} FROM workspaces w JOIN members m ON m.workspace_id = w.id AND m.principal_id = $1
      WHERE ($2::text IS NULL OR w.id < $2) ORDER BY w.id DESC LIMIT $3`,
    [ctx.principal.id, page.after, page.limit + 1],
  );
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { workspaces: items.map(renderWorkspace), next_cursor, has_more } };
};

/** Creates a workspace; the caller becomes its owner (quota: workspaces created per principal). */
export const createWorkspace: Handler<'createWorkspace'> = async (ctx) => {
  const { name, display_name } = ctx.body;
  checkName(name);
  const limit = ctx.deps.config.quotas.workspacesPerPrincipal;
  // Serialise this principal's creates, so two at once cannot both pass the quota.
  await ctx.db.query('SELECT id FROM principals WHERE id = $1 FOR UPDATE', [ctx.principal.id]);
  const { rows: counted } = await ctx.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM workspaces WHERE created_by = $1',
    [ctx.principal.id],
  );
  if ((counted[0]?.n ?? 0) >= limit)
    throw quotaExceeded('workspaces_per_principal', limit, `you have already created ${limit} workspaces`);
  const id = newId();
  const { rows } = await ctx.db.query<WorkspaceRow>(
    `INSERT INTO workspaces (id, name, display_name, created_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name) DO NOTHING RETURNING *`,
    [id, name, display_name ?? name, ctx.principal.id],
  );
  const workspace = rows[0];
  if (!workspace) throw new ApiError('already_exists', `a workspace named ${name} already exists`);
  await ctx.db.query(
    `INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')`,
    [newId(), id, ctx.principal.id],
  );
  return {
    status: 201,
    body: { workspace: renderWorkspace(workspace) },
    headers: { location: `${API_PREFIX}/workspaces/${id}` },
  };
};

/** One workspace the caller is a member of. */
export const getWorkspace: Handler<'getWorkspace'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  return { status: 200, body: { workspace: renderWorkspace(workspace) } };
};

/** Renames or re-labels a workspace (owner). */
export const updateWorkspace: Handler<'updateWorkspace'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'owner', {
    lock: true,
  });
  await ctx.countMutation(workspace.id);
  checkName(ctx.body.name);
  const { rows } = await ctx.db.query<WorkspaceRow>(
    `UPDATE workspaces SET name = coalesce($2, name), display_name = coalesce($3, display_name), updated_at = now()
      WHERE id = $1 RETURNING *`,
    [workspace.id, ctx.body.name ?? null, ctx.body.display_name ?? null],
  );
  return { status: 200, body: { workspace: renderWorkspace(rows[0] as WorkspaceRow) } };
};

/** Deletes an empty workspace (owner): 409 `invalid_state` while it has live computers. */
export const deleteWorkspace: Handler<'deleteWorkspace'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'owner', {
    lock: true,
  });
  await ctx.countMutation(workspace.id);
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM computers WHERE workspace_id = $1 AND state <> 'deleted'`,
    [workspace.id],
  );
  if ((rows[0]?.n ?? 0) > 0)
    throw new ApiError(
      'invalid_state',
      `workspace ${workspace.name} still has ${rows[0]?.n} live computers; delete them first`,
    );
  // Its service accounts stop working at once: their principals are disabled, keys revoked.
  await ctx.db.query(
    `UPDATE principals SET disabled_at = now(), updated_at = now()
      WHERE id IN (SELECT id FROM service_accounts WHERE workspace_id = $1)`,
    [workspace.id],
  );
  await ctx.db.query(
    `UPDATE keys SET state = 'revoked', revoked_at = coalesce(revoked_at, now()), updated_at = now()
      WHERE principal_id IN (SELECT id FROM service_accounts WHERE workspace_id = $1)`,
    [workspace.id],
  );
  await ctx.db.query(
    'DELETE FROM members WHERE principal_id IN (SELECT id FROM service_accounts WHERE workspace_id = $1)',
    [workspace.id],
  );
  await ctx.db.query('DELETE FROM workspaces WHERE id = $1', [workspace.id]);
  return { status: 204, body: undefined };
};

export const workspaceHandlers = {
  listWorkspaces,
  createWorkspace,
  getWorkspace,
  updateWorkspace,
  deleteWorkspace,
};
