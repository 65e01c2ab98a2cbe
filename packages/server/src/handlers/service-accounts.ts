import { checkReach, permissionDenied, workspaceAccess } from '../access.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { pageRequest, toPage } from '../paging.js';
import type { ServiceAccountRow } from '../render.js';
import { renderServiceAccount } from '../render.js';
import {
  API_PREFIX,
  checkMemberQuota,
  checkName,
  lastOwner,
  ownerCount,
  SERVICE_ACCOUNT_COLUMNS,
  SERVICE_ACCOUNT_FROM,
  serviceAccountIn,
} from './common.js';
import type { Handler } from './types.js';

export const listServiceAccounts: Handler<'listServiceAccounts'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listServiceAccounts',
    workspace: workspace.id,
  });
  const { rows } = await ctx.db.query<ServiceAccountRow>(
    `SELECT ${SERVICE_ACCOUNT_COLUMNS} FROM ${SERVICE_ACCOUNT_FROM}
      WHERE s.workspace_id = $1 AND ($2::text IS NULL OR s.id < $2) ORDER BY s.id DESC LIMIT $3`,
    [workspace.id, page.after, page.limit + 1],
  );
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { service_accounts: items.map(renderServiceAccount), next_cursor, has_more } };
};

export const getServiceAccount: Handler<'getServiceAccount'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account);
  return { status: 200, body: { service_account: renderServiceAccount(account) } };
};

/** A service account (a principal of kind `service_account`) with its role in the owning workspace. */
export const createServiceAccount: Handler<'createServiceAccount'> = async (ctx) => {
  const { workspace, role } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'manage', {
    lock: true,
  });
  if (ctx.body.role === 'owner' && role !== 'owner') throw permissionDenied(role, 'owner to grant owner');
  ctx.countMutation(workspace.id);
  checkName(ctx.body.name);
  await checkMemberQuota(ctx.db, workspace, ctx.deps.config.quotas.membersPerWorkspace);
  const id = newId();
  const displayName = ctx.body.display_name ?? ctx.body.name;
  await ctx.db.query(
    `INSERT INTO principals (id, kind, name, display_name) VALUES ($1, 'service_account', $2, $3)`,
    [id, ctx.body.name, displayName],
  );
  const inserted = await ctx.db.query(
    `INSERT INTO service_accounts (id, workspace_id, name) VALUES ($1, $2, $3)
     ON CONFLICT (workspace_id, name) DO NOTHING`,
    [id, workspace.id, ctx.body.name],
  );
  if (inserted.rowCount !== 1)
    throw new ApiError(
      'already_exists',
      `a service account named ${ctx.body.name} already exists in this workspace`,
    );
  await ctx.db.query('INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, $4)', [
    newId(),
    workspace.id,
    id,
    ctx.body.role,
  ]);
  const account = await serviceAccountIn(ctx.db, workspace.id, id);
  return {
    status: 201,
    body: { service_account: renderServiceAccount(account) },
    headers: { location: `${API_PREFIX}/workspaces/${workspace.id}/service-accounts/${id}` },
  };
};

export const updateServiceAccount: Handler<'updateServiceAccount'> = async (ctx) => {
  const { workspace, role } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'manage', {
    lock: true,
  });
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account, { lock: true });
  const newRole = ctx.body.role;
  const touchesOwner = account.role === 'owner' || newRole === 'owner';
  if (touchesOwner && role !== 'owner') throw permissionDenied(role, 'owner to change an owner');
  ctx.countMutation(workspace.id);
  checkName(ctx.body.name);
  if (
    account.role === 'owner' &&
    newRole !== undefined &&
    newRole !== 'owner' &&
    (await ownerCount(ctx.db, workspace.id)) <= 1
  )
    throw lastOwner(workspace.name);
  if (ctx.body.name !== undefined && ctx.body.name !== account.name) {
    const renamed = await ctx.db.query(
      `UPDATE service_accounts SET name = $2, updated_at = now() WHERE id = $1
         AND NOT EXISTS (SELECT 1 FROM service_accounts WHERE workspace_id = $3 AND name = $2)`,
      [account.id, ctx.body.name, workspace.id],
    );
    if (renamed.rowCount !== 1)
      throw new ApiError(
        'already_exists',
        `a service account named ${ctx.body.name} already exists in this workspace`,
      );
  }
  await ctx.db.query(
    `UPDATE principals SET name = coalesce($2, name), display_name = coalesce($3, display_name), updated_at = now()
      WHERE id = $1`,
    [account.id, ctx.body.name ?? null, ctx.body.display_name ?? null],
  );
  if (newRole !== undefined)
    await ctx.db.query(
      'UPDATE members SET role = $3, updated_at = now() WHERE workspace_id = $1 AND principal_id = $2',
      [workspace.id, account.id, newRole],
    );
  await ctx.db.query('UPDATE service_accounts SET updated_at = now() WHERE id = $1', [account.id]);
  const updated = await serviceAccountIn(ctx.db, workspace.id, account.id);
  return { status: 200, body: { service_account: renderServiceAccount(updated) } };
};

/**
 * Deletes a service account: its keys are revoked, its memberships removed and its principal
 * disabled, so its tokens fail on the next request. Its name is freed. Refused (409) when it is the
 * last owner of some workspace.
 */
export const deleteServiceAccount: Handler<'deleteServiceAccount'> = async (ctx) => {
  const { workspace, role } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'manage', {
    lock: true,
  });
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account, { lock: true });
  if (account.role === 'owner' && role !== 'owner') throw permissionDenied(role, 'owner to delete an owner');
  // Deleting it revokes its keys and removes it from every workspace it is a member of.
  await checkReach(ctx.db, ctx.principal.id, account.id, 'match');
  ctx.countMutation(workspace.id);
  const { rows: sole } = await ctx.db.query<{ name: string }>(
    `SELECT w.name FROM members m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.principal_id = $1 AND m.role = 'owner'
        AND NOT EXISTS (SELECT 1 FROM members o WHERE o.workspace_id = m.workspace_id AND o.role = 'owner' AND o.principal_id <> $1)`,
    [account.id],
  );
  if (sole[0]) throw lastOwner(sole[0].name);
  await ctx.db.query(
    `UPDATE keys SET state = 'revoked', revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE principal_id = $1`,
    [account.id],
  );
  await ctx.db.query('DELETE FROM members WHERE principal_id = $1', [account.id]);
  await ctx.db.query('DELETE FROM service_accounts WHERE id = $1', [account.id]);
  await ctx.db.query('UPDATE principals SET disabled_at = now(), updated_at = now() WHERE id = $1', [
    account.id,
  ]);
  return { status: 204, body: undefined };
};

export const serviceAccountHandlers = {
  listServiceAccounts,
  getServiceAccount,
  createServiceAccount,
  updateServiceAccount,
  deleteServiceAccount,
};
