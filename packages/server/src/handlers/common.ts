import type { Queryable } from '../db/database.js';
import { ApiError, invalidArgument } from '../errors.js';
import { isId, isName } from '../ids.js';
import type { ServiceAccountRow } from '../render.js';

/** The path prefix of `Location` headers (design §2: `/v1/…`). */
export const API_PREFIX = '/v1';

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

/** The `WHERE` column for an id-or-name path parameter (design §1: an id-shaped value is an id). */
export function byIdOrName(ref: string, idColumn: string, nameColumn: string): string {
  return isId(ref) ? idColumn : nameColumn;
}

/** The columns of a rendered service account, from `service_accounts s`, `principals p`, `members m`. */
export const SERVICE_ACCOUNT_COLUMNS =
  's.id, s.workspace_id, s.name, p.display_name, m.role, s.created_at, s.updated_at';
/** The joins behind {@link SERVICE_ACCOUNT_COLUMNS}: its role is its membership in the owning workspace. */
export const SERVICE_ACCOUNT_FROM = `service_accounts s JOIN principals p ON p.id = s.id
  JOIN members m ON m.workspace_id = s.workspace_id AND m.principal_id = s.id`;

/**
 * A service account of the workspace, by id or name; 404 `not_found` otherwise. `lock` locks its row.
 *
 * @example
 * const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account);
 */
export async function serviceAccountIn(
  db: Queryable,
  workspaceId: string,
  ref: string,
  options: { lock?: boolean } = {},
): Promise<ServiceAccountRow> {
  const { rows } = await db.query<ServiceAccountRow>(
    `SELECT ${SERVICE_ACCOUNT_COLUMNS} FROM ${SERVICE_ACCOUNT_FROM}
      WHERE s.workspace_id = $1 AND ${byIdOrName(ref, 's.id', 's.name')} = $2${options.lock ? ' FOR UPDATE OF s' : ''}`,
    [workspaceId, ref],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `service account ${ref} not found in this workspace`);
  return row;
}

/** How many owners the workspace has (call under the workspace's row lock). */
export async function ownerCount(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM members WHERE workspace_id = $1 AND role = 'owner'`,
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
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
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM members WHERE workspace_id = $1',
    [workspace.id],
  );
  if ((rows[0]?.n ?? 0) >= limit)
    throw quotaExceeded(
      'members_per_workspace',
      limit,
      `workspace ${workspace.name} already has ${limit} members`,
    );
}
