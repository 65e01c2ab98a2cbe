import { renderServiceAccount } from '../computers/render.js';
import { checkReach, permissionDenied } from '../identity/access.js';
import { revokeKeysOf } from '../identity/repositories/keys.js';
import {
  deleteMembershipsOf,
  insertServiceAccountMember,
  ownerCount,
  setRoleIn,
  soleOwnerOf,
} from '../identity/repositories/members.js';
import {
  disablePrincipal,
  insertServiceAccountPrincipal,
  renamePrincipal,
} from '../identity/repositories/principals.js';
import {
  deleteServiceAccountRow,
  insertServiceAccount,
  listServiceAccountRows,
  renameServiceAccount,
  serviceAccountIn,
  touchServiceAccount,
} from '../identity/repositories/service-accounts.js';
import { ApiError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { API_PREFIX, checkMemberQuota, checkName, lastOwner, permittedWorkspace } from './common.js';
import type { MemberDeps } from './deps.js';
import type { Handler } from './types.js';

export const listServiceAccounts: Handler<'listServiceAccounts', MemberDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listServiceAccounts',
    workspace: workspace.id,
  });
  const rows = await listServiceAccountRows(ctx.db, workspace.id, {
    after: page.after,
    limit: page.limit + 1,
  });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { service_accounts: items.map(renderServiceAccount), next_cursor, has_more } };
};

export const getServiceAccount: Handler<'getServiceAccount', MemberDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account);
  return { status: 200, body: { service_account: renderServiceAccount(account) } };
};

/** A service account (a principal of kind `service_account`) with its role in the owning workspace. */
export const createServiceAccount: Handler<'createServiceAccount', MemberDeps> = async (ctx) => {
  const { workspace, role } = await permittedWorkspace(ctx, {
    lock: true,
  });
  if (ctx.body.role === 'owner' && role !== 'owner') throw permissionDenied(role, 'owner to grant owner');
  await ctx.countMutation(workspace.id);
  checkName(ctx.body.name);
  await checkMemberQuota(ctx.db, workspace, ctx.deps.config.quotas.membersPerWorkspace);
  const id = newId();
  const displayName = ctx.body.display_name ?? ctx.body.name;
  await insertServiceAccountPrincipal(ctx.db, { id, name: ctx.body.name, displayName });
  if (!(await insertServiceAccount(ctx.db, { id, workspaceId: workspace.id, name: ctx.body.name })))
    throw new ApiError(
      'already_exists',
      `a service account named ${ctx.body.name} already exists in this workspace`,
    );
  await insertServiceAccountMember(ctx.db, {
    id: newId(),
    workspaceId: workspace.id,
    principalId: id,
    role: ctx.body.role,
  });
  const account = await serviceAccountIn(ctx.db, workspace.id, id);
  return {
    status: 201,
    body: { service_account: renderServiceAccount(account) },
    headers: { location: `${API_PREFIX}/workspaces/${workspace.id}/service-accounts/${id}` },
  };
};

export const updateServiceAccount: Handler<'updateServiceAccount', MemberDeps> = async (ctx) => {
  const { workspace, role } = await permittedWorkspace(ctx, {
    lock: true,
  });
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account, { lock: true });
  const newRole = ctx.body.role;
  const touchesOwner = account.role === 'owner' || newRole === 'owner';
  if (touchesOwner && role !== 'owner') throw permissionDenied(role, 'owner to change an owner');
  await ctx.countMutation(workspace.id);
  checkName(ctx.body.name);
  if (
    account.role === 'owner' &&
    newRole !== undefined &&
    newRole !== 'owner' &&
    (await ownerCount(ctx.db, workspace.id)) <= 1
  )
    throw lastOwner(workspace.name);
  if (ctx.body.name !== undefined && ctx.body.name !== account.name) {
    if (
      !(await renameServiceAccount(ctx.db, {
        id: account.id,
        workspaceId: workspace.id,
        name: ctx.body.name,
      }))
    )
      throw new ApiError(
        'already_exists',
        `a service account named ${ctx.body.name} already exists in this workspace`,
      );
  }
  await renamePrincipal(ctx.db, account.id, {
    name: ctx.body.name ?? null,
    displayName: ctx.body.display_name ?? null,
  });
  if (newRole !== undefined) await setRoleIn(ctx.db, workspace.id, account.id, newRole);
  await touchServiceAccount(ctx.db, account.id);
  const updated = await serviceAccountIn(ctx.db, workspace.id, account.id);
  return { status: 200, body: { service_account: renderServiceAccount(updated) } };
};

/**
 * Deletes a service account: its keys are revoked, its memberships removed and its principal
 * disabled, so its tokens fail on the next request. Its name is freed. Refused (409) when it is the
 * last owner of some workspace.
 */
export const deleteServiceAccount: Handler<'deleteServiceAccount', MemberDeps> = async (ctx) => {
  const { workspace, role } = await permittedWorkspace(ctx, {
    lock: true,
  });
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account, { lock: true });
  if (account.role === 'owner' && role !== 'owner') throw permissionDenied(role, 'owner to delete an owner');
  // Deleting it revokes its keys and removes it from every workspace it is a member of.
  await checkReach(ctx.db, ctx.principal.id, account.id, 'match');
  await ctx.countMutation(workspace.id);
  const sole = await soleOwnerOf(ctx.db, account.id);
  if (sole) throw lastOwner(sole);
  await revokeKeysOf(ctx.db, account.id);
  await deleteMembershipsOf(ctx.db, account.id);
  await deleteServiceAccountRow(ctx.db, account.id);
  await disablePrincipal(ctx.db, account.id);
  return { status: 204, body: undefined };
};

export const serviceAccountHandlers = {
  listServiceAccounts,
  getServiceAccount,
  createServiceAccount,
  updateServiceAccount,
  deleteServiceAccount,
};
