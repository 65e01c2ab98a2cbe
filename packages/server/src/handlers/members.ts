import { renderMember } from '../computers/render.js';
import { allows, NEEDS, permissionDenied, workspaceAccess } from '../identity/access.js';
import {
  deleteMemberRow,
  insertMember,
  listMemberRows,
  memberIn,
  ownerCount,
  setMemberRole,
} from '../identity/repositories/members.js';
import { enabledPrincipalKind } from '../identity/repositories/principals.js';
import { isServiceAccountOf } from '../identity/repositories/service-accounts.js';
import type { Role } from '../identity/roles.js';
import { ApiError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { API_PREFIX, checkMemberQuota, lastOwner, permittedWorkspace } from './common.js';
import type { MemberDeps } from './deps.js';
import type { Handler } from './types.js';

/** Granting or revoking `owner` needs `owner` (design §8). */
function checkOwnerChange(callerRole: Role, from: Role | undefined, to: Role | undefined): void {
  if ((from === 'owner' || to === 'owner') && callerRole !== 'owner')
    throw permissionDenied(callerRole, 'owner to grant or revoke owner');
}

export const listMembers: Handler<'listMembers', MemberDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listMembers', workspace: workspace.id });
  const rows = await listMemberRows(ctx.db, workspace.id, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { members: items.map(renderMember), next_cursor, has_more } };
};

export const getMember: Handler<'getMember', MemberDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  return {
    status: 200,
    body: { member: renderMember(await memberIn(ctx.db, workspace.id, ctx.path.member)) },
  };
};

/** Adds a principal (a user, or a service account of any workspace) with a role; admin, owner for owner. */
export const createMember: Handler<'createMember', MemberDeps> = async (ctx) => {
  const { workspace, role } = await permittedWorkspace(ctx, {
    lock: true,
  });
  checkOwnerChange(role, undefined, ctx.body.role);
  await ctx.countMutation(workspace.id);
  if (!(await enabledPrincipalKind(ctx.db, ctx.body.principal_id)))
    throw new ApiError('not_found', `principal ${ctx.body.principal_id} not found`);
  await checkMemberQuota(ctx.db, workspace, ctx.deps.config.quotas.membersPerWorkspace);
  const id = newId();
  const inserted = await insertMember(ctx.db, {
    id,
    workspaceId: workspace.id,
    principalId: ctx.body.principal_id,
    role: ctx.body.role,
  });
  if (!inserted)
    throw new ApiError('already_exists', `principal ${ctx.body.principal_id} is already a member`);
  const member = await memberIn(ctx.db, workspace.id, id);
  return {
    status: 201,
    body: { member: renderMember(member) },
    headers: { location: `${API_PREFIX}/workspaces/${workspace.id}/members/${id}` },
  };
};

/** Changes a role; only owners touch `owner`, and the last owner stays. */
export const updateMember: Handler<'updateMember', MemberDeps> = async (ctx) => {
  const { workspace, role } = await permittedWorkspace(ctx, {
    lock: true,
  });
  const member = await memberIn(ctx.db, workspace.id, ctx.path.member);
  checkOwnerChange(role, member.role, ctx.body.role);
  await ctx.countMutation(workspace.id);
  if (member.role === 'owner' && ctx.body.role !== 'owner' && (await ownerCount(ctx.db, workspace.id)) <= 1)
    throw lastOwner(workspace.name);
  await setMemberRole(ctx.db, member.id, ctx.body.role);
  return { status: 200, body: { member: renderMember(await memberIn(ctx.db, workspace.id, member.id)) } };
};

/**
 * Removes a membership: admins remove others (owners only by owners); anyone may leave, except the
 * last owner. A service account's membership in its owning workspace is its role there: delete the
 * service account instead (409 `invalid_state`).
 *
 * The declared permission (`manage`) is what removing another member needs, and what the
 * authorization matrix checks. Leaving is the one case the operation's description allows with less:
 * any member (`read`) may remove its own membership, so the workspace is resolved with `read` and the
 * declared permission is checked once the member turns out to be someone else.
 */
export const deleteMember: Handler<'deleteMember', MemberDeps> = async (ctx) => {
  const { workspace, role } = await workspaceAccess(ctx.db, ctx.access, ctx.path.workspace, 'read', {
    lock: true,
  });
  const member = await memberIn(ctx.db, workspace.id, ctx.path.member);
  const self = member.principal_id === ctx.principal.id;
  if (!self && !allows(role, ctx.permission)) throw permissionDenied(role, NEEDS[ctx.permission]);
  if (!self) checkOwnerChange(role, member.role, undefined);
  await ctx.countMutation(workspace.id);
  if (member.role === 'owner' && (await ownerCount(ctx.db, workspace.id)) <= 1)
    throw lastOwner(workspace.name);
  if (await isServiceAccountOf(ctx.db, member.principal_id, workspace.id))
    throw new ApiError(
      'invalid_state',
      'this is a service account of this workspace: its membership is its role here; delete the service account instead',
    );
  await deleteMemberRow(ctx.db, member.id);
  return { status: 204, body: undefined };
};

export const memberHandlers = { listMembers, getMember, createMember, updateMember, deleteMember };
