import { type Access, type Permission, type WorkspaceAccess, workspaceAccess } from '../identity/access.js';
import { memberCount } from '../identity/repositories/members.js';
import type { Queryable } from '../platform/db/database.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { isName } from '../platform/ids.js';

/** The path prefix of `Location` headers (design §2: `/v1/…`). */
export { API_PREFIX } from '../http/path.js';

/** What {@link permittedWorkspace} reads of a handler's context: an operation in `{workspace}` that needs a role there. */
interface InWorkspace {
  db: Queryable;
  access: Access;
  path: { workspace: string };
  permission: Permission;
}

/**
 * The workspace `{workspace}` names and the caller's current role there, refused unless that role
 * holds the permission the spec declares for the operation (`x-svc.permission`): 404 `not_found` for
 * a non-member, 403 `permission_denied` for a weaker role (design §8). Only an operation whose declared
 * permission is a role in the workspace has a context that fits. `lock` as for `workspaceAccess`.
 *
 * @example
 * const { workspace } = await permittedWorkspace(ctx); // in the handler of createComputer: editor and up
 */
export function permittedWorkspace(
  ctx: InWorkspace,
  options: { lock?: boolean } = {},
): Promise<WorkspaceAccess> {
  return workspaceAccess(ctx.db, ctx.access, ctx.path.workspace, ctx.permission, options);
}

/** Refuses a client-chosen name that has the form of an id (design §1); the pattern was validated. */
export function checkName(value: string | undefined, field = 'name'): void {
  if (value !== undefined && !isName(value))
    throw invalidArgument([
      { field, description: 'must be a DNS label that does not have the form of an id' },
    ]);
}

/** 403 `quota_exceeded` with the spec's `details.quota` and `details.limit`. */
export function quotaExceeded(quota: string | undefined, limit: number, message: string): ApiError {
  return new ApiError('quota_exceeded', message, { details: { ...(quota ? { quota } : {}), limit } });
}

/** 409 `invalid_state`: the change would leave the workspace without an owner (design §8). */
export function lastOwner(workspaceName: string): ApiError {
  return new ApiError(
    'invalid_state',
    `the last owner of workspace ${workspaceName} cannot be removed or demoted`,
  );
}

/**
 * The members quota (design §11): every membership counts, a service account's own included, since a
 * new service account is made a member of its workspace.
 *
 * @example
 * await checkMemberQuota(ctx.db, workspace, ctx.deps.config.quotas.membersPerWorkspace);
 */
export async function checkMemberQuota(
  db: Queryable,
  workspace: { id: string; name: string },
  limit: number,
): Promise<void> {
  if ((await memberCount(db, workspace.id)) >= limit)
    throw quotaExceeded(
      'members_per_workspace',
      limit,
      `workspace ${workspace.name} already has ${limit} members`,
    );
}
