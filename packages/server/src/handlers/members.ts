import type { Role } from '../access.js';
import { atLeast, permissionDenied, workspaceAccess } from '../access.js';
import type { Queryable } from '../db/database.js';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import { pageRequest, toPage } from '../paging.js';
import type { MemberRow } from '../render.js';
import { renderMember } from '../render.js';
import { API_PREFIX, checkMemberQuota, lastOwner, ownerCount } from './common.js';
import type { Handler } from './types.js';

const COLUMNS =
  'm.id, m.workspace_id, m.principal_id, p.kind AS principal_kind, m.role, m.created_at, m.updated_at';
const FROM = 'members m JOIN principals p ON p.id = m.principal_id';

async function memberIn(db: Queryable, workspaceId: string, memberId: string): Promise<MemberRow> {
  const { rows } = await db.query<MemberRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE m.workspace_id = $1 AND m.id = $2`,
    [workspaceId, memberId],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `member ${memberId} not found in this workspace`);
  return row;
}

/** Granting or revoking `owner` needs `owner` (design §8). */
function checkOwnerChange(callerRole: Role, from: Role | undefined, to: Role | undefined): void {
  if ((from === 'owner' || to === 'owner') && callerRole !== 'owner')
    throw permissionDenied(callerRole, 'owner to grant or revoke owner');
}

export const listMembers: Handler<'listMembers'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listMembers', workspace: workspace.id });
  const { rows } = await ctx.db.query<MemberRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE m.workspace_id = $1 AND ($2::text IS NULL OR m.id < $2)
      ORDER BY m.id DESC LIMIT $3`,
    [workspace.id, page.after, page.limit + 1],
  );
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { members: items.map(renderMember), next_cursor, has_more } };
};

export const getMember: Handler<'getMember'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  return {
    status: 200,
    body: { member: renderMember(await memberIn(ctx.db, workspace.id, ctx.path.member)) },
  };
};

/** Adds a principal (a user, or a service account of any workspace) with a role; admin, owner for owner. */
export const createMember: Handler<'createMember'> = async (ctx) => {
  const { workspace, role } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'manage', {
    lock: true,
  });
  checkOwnerChange(role, undefined, ctx.body.role);
  await ctx.countMutation(workspace.id);
  const { rows: principals } = await ctx.db.query<{ kind: string }>(
    'SELECT kind FROM principals WHERE id = $1 AND disabled_at IS NULL',
    [ctx.body.principal_id],
  );
  if (!principals[0]) throw new ApiError('not_found', `principal ${ctx.body.principal_id} not found`);
  await checkMemberQuota(ctx.db, workspace, ctx.deps.config.quotas.membersPerWorkspace);
  const id = newId();
  const inserted = await ctx.db.query(
    `INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workspace_id, principal_id) DO NOTHING`,
    [id, workspace.id, ctx.body.principal_id, ctx.body.role],
  );
  if (inserted.rowCount !== 1)
    throw new ApiError('already_exists', `principal ${ctx.body.principal_id} is already a member`);
  const member = await memberIn(ctx.db, workspace.id, id);
  return {
    status: 201,
    body: { member: renderMember(member) },
    headers: { location: `${API_PREFIX}/workspaces/${workspace.id}/members/${id}` },
  };
};

/** Changes a role; only owners touch `owner`, and the last owner stays. */
export const updateMember: Handler<'updateMember'> = async (ctx) => {
  const { workspace, role } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'manage', {
    lock: true,
  });
  const member = await memberIn(ctx.db, workspace.id, ctx.path.member);
  checkOwnerChange(role, member.role, ctx.body.role);
  await ctx.countMutation(workspace.id);
  if (member.role === 'owner' && ctx.body.role !== 'owner' && (await ownerCount(ctx.db, workspace.id)) <= 1)
    throw lastOwner(workspace.name);
  await ctx.db.query('UPDATE members SET role = $2, updated_at = now() WHERE id = $1', [
    member.id,
    ctx.body.role,
  ]);
  return { status: 200, body: { member: renderMember(await memberIn(ctx.db, workspace.id, member.id)) } };
};

/**
 * Removes a membership: admins remove others (owners only by owners); anyone may leave, except the
 * last owner. A service account's membership in its owning workspace is its role there: delete the
 * service account instead (409 `invalid_state`).
 */
export const deleteMember: Handler<'deleteMember'> = async (ctx) => {
  const { workspace, role } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read', {
    lock: true,
  });
  const member = await memberIn(ctx.db, workspace.id, ctx.path.member);
  const self = member.principal_id === ctx.principal.id;
  if (!self && !atLeast(role, 'admin')) throw permissionDenied(role, 'admin');
  if (!self) checkOwnerChange(role, member.role, undefined);
  await ctx.countMutation(workspace.id);
  if (member.role === 'owner' && (await ownerCount(ctx.db, workspace.id)) <= 1)
    throw lastOwner(workspace.name);
  const { rowCount: owned } = await ctx.db.query(
    'SELECT 1 FROM service_accounts WHERE id = $1 AND workspace_id = $2',
    [member.principal_id, workspace.id],
  );
  if (owned > 0)
    throw new ApiError(
      'invalid_state',
      'this is a service account of this workspace: its membership is its role here; delete the service account instead',
    );
  await ctx.db.query('DELETE FROM members WHERE id = $1', [member.id]);
  return { status: 204, body: undefined };
};

export const memberHandlers = { listMembers, getMember, createMember, updateMember, deleteMember };
