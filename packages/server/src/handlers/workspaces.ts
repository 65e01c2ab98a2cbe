import { storedDefaults } from '../computers/lifetimes.js';
import { renderWorkspace } from '../computers/render.js';
import { countLiveComputers } from '../computers/repositories/computers.js';
import { workspaceSnapshots } from '../computers/repositories/snapshots.js';
import { insertOwner } from '../identity/repositories/members.js';
import { lockPrincipal } from '../identity/repositories/principals.js';
import {
  countWorkspacesCreatedBy,
  deleteWorkspaceRow,
  insertWorkspace,
  listWorkspaceRows,
  updateWorkspaceRow,
} from '../identity/repositories/workspaces.js';
import { ApiError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { API_PREFIX, checkName, permittedWorkspace, quotaExceeded } from './common.js';
import type { WorkspaceDeps } from './deps.js';
import { snapshotStore } from './snapshots.js';
import type { Handler } from './types.js';

/** The caller's workspaces (any role), newest first. */
export const listWorkspaces: Handler<'listWorkspaces', WorkspaceDeps> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listWorkspaces',
    principal: ctx.principal.id,
  });
  const rows = await listWorkspaceRows(ctx.db, ctx.principal.id, {
    after: page.after,
    limit: page.limit + 1,
  });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { workspaces: items.map(renderWorkspace), next_cursor, has_more } };
};

/** Creates a workspace; the caller becomes its owner (quota: workspaces created per principal). */
export const createWorkspace: Handler<'createWorkspace', WorkspaceDeps> = async (ctx) => {
  const { name, display_name } = ctx.body;
  checkName(name);
  const limit = ctx.deps.config.quotas.workspacesPerPrincipal;
  // Serialise this principal's creates, so two at once cannot both pass the quota.
  await lockPrincipal(ctx.db, ctx.principal.id);
  if ((await countWorkspacesCreatedBy(ctx.db, ctx.principal.id)) >= limit)
    throw quotaExceeded('workspaces_per_principal', limit, `you have already created ${limit} workspaces`);
  const id = newId();
  const workspace = await insertWorkspace(ctx.db, {
    id,
    name,
    displayName: display_name ?? name,
    createdBy: ctx.principal.id,
  });
  if (!workspace) throw new ApiError('already_exists', `a workspace named ${name} already exists`);
  await insertOwner(ctx.db, { id: newId(), workspaceId: id, principalId: ctx.principal.id });
  return {
    status: 201,
    body: { workspace: renderWorkspace(workspace) },
    headers: { location: `${API_PREFIX}/workspaces/${id}` },
  };
};

/** One workspace the caller is a member of. */
export const getWorkspace: Handler<'getWorkspace', WorkspaceDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  return { status: 200, body: { workspace: renderWorkspace(workspace) } };
};

/** Renames a workspace or changes its computers' lifetime defaults (owner; `null` clears them). */
export const updateWorkspace: Handler<'updateWorkspace', WorkspaceDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx, {
    lock: true,
  });
  await ctx.countMutation(workspace.id);
  checkName(ctx.body.name);
  const updated = await updateWorkspaceRow(ctx.db, workspace.id, {
    name: ctx.body.name ?? null,
    displayName: ctx.body.display_name ?? null,
    ...(ctx.body.lifetime_defaults === undefined
      ? {}
      : { lifetimeDefaults: storedDefaults(ctx.body.lifetime_defaults) }),
  });
  return { status: 200, body: { workspace: renderWorkspace(updated) } };
};

/** Deletes an empty workspace (owner): 409 `invalid_state` while it has live computers. */
export const deleteWorkspace: Handler<'deleteWorkspace', WorkspaceDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx, {
    lock: true,
  });
  await ctx.countMutation(workspace.id);
  const live = await countLiveComputers(ctx.db, workspace.id);
  if (live > 0)
    throw new ApiError(
      'invalid_state',
      `workspace ${workspace.name} still has ${live} live computers; delete them first`,
    );
  // Its snapshots' images leave the engine before their rows go with the workspace (design §4.2).
  const snapshots = await workspaceSnapshots(ctx.db, workspace.id);
  const creating = snapshots.find((snapshot) => snapshot.state === 'creating');
  if (creating)
    throw new ApiError(
      'invalid_state',
      `workspace ${workspace.name} has a snapshot being made (${creating.name}); wait for it first`,
    );
  if (snapshots.length > 0) {
    const store = snapshotStore(ctx.deps);
    for (const snapshot of snapshots) await store.remove(snapshot, ctx.request.signal);
  }
  // Its service accounts stop working at once: their principals are disabled, keys revoked.
  await deleteWorkspaceRow(ctx.db, workspace.id);
  return { status: 204, body: undefined };
};

export const workspaceHandlers = {
  listWorkspaces,
  createWorkspace,
  getWorkspace,
  updateWorkspace,
  deleteWorkspace,
};
