import { checkReach, workspaceAccess } from '../access.js';
import type { KeyAlgorithm } from '../auth/keypair.js';
import { generateServiceAccountKey, keyFile } from '../auth/keypair.js';
import type { Queryable } from '../db/database.js';
import { ApiError, invalidArgument } from '../errors.js';
import { newId } from '../ids.js';
import { pageRequest, toPage } from '../paging.js';
import type { KeyRow, ServiceAccountRow } from '../render.js';
import { renderKey } from '../render.js';
import { API_PREFIX, quotaExceeded, serviceAccountIn } from './common.js';
import type { Ctx, Handler } from './types.js';

const COLUMNS =
  'id, principal_id, algorithm, public_jwk, state, expires_at, last_used_at, created_at, updated_at';

/**
 * The workspace and service account of a keys route, checked for `manage`. A key acts with every role
 * the service account holds, in any workspace, so managing its keys needs at least that role in each
 * of them (an `owner` service account needs an owner; one that is owner of another workspace needs an
 * owner there): see {@link checkReach}.
 */
async function manageable(
  ctx: Ctx<'createKey'> | Ctx<'deleteKey'>,
): Promise<{ workspaceId: string; account: ServiceAccountRow }> {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'manage');
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account, { lock: true });
  await checkReach(ctx.db, ctx.principal.id, account.id, 'match');
  ctx.countMutation(workspace.id);
  return { workspaceId: workspace.id, account };
}

async function keyOf(db: Queryable, accountId: string, keyId: string): Promise<KeyRow> {
  const { rows } = await db.query<KeyRow>(`SELECT ${COLUMNS} FROM keys WHERE principal_id = $1 AND id = $2`, [
    accountId,
    keyId,
  ]);
  if (!rows[0]) throw new ApiError('not_found', `key ${keyId} not found for this service account`);
  return rows[0];
}

export const listKeys: Handler<'listKeys'> = async (ctx) => {
  const { workspace } = await workspaceAccess(ctx.db, ctx.principal.id, ctx.path.workspace, 'read');
  const account = await serviceAccountIn(ctx.db, workspace.id, ctx.path.service_account);
  // Its keys (and when they were last used) concern every workspace it acts in.
  await checkReach(ctx.db, ctx.principal.id, account.id, 'read');
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listKeys', service_account: account.id });
  const { rows } = await ctx.db.query<KeyRow>(
    `SELECT ${COLUMNS} FROM keys WHERE principal_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [account.id, page.after, page.limit + 1],
  );
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { keys: items.map(renderKey), next_cursor, has_more } };
};

/** A new key pair; the answer carries the key file with the private key, once (stored only for replay). */
export const createKey: Handler<'createKey'> = async (ctx) => {
  const { workspaceId, account } = await manageable(ctx);
  const algorithm: KeyAlgorithm = ctx.body?.algorithm ?? 'EdDSA';
  const expiresAt = ctx.body?.expires_at === undefined ? null : new Date(ctx.body.expires_at);
  if (expiresAt && expiresAt.getTime() <= Date.now())
    throw invalidArgument([{ field: 'expires_at', description: 'must be in the future' }]);
  const limit = ctx.deps.config.quotas.activeKeysPerServiceAccount;
  const { rows: counted } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM keys WHERE principal_id = $1 AND state = 'active'
        AND (expires_at IS NULL OR expires_at > now())`,
    [account.id],
  );
  if ((counted[0]?.n ?? 0) >= limit)
    throw quotaExceeded(
      'active_keys_per_service_account',
      limit,
      `service account ${account.name} already has ${limit} active keys; revoke one first`,
    );
  const pair = await generateServiceAccountKey(algorithm);
  const id = newId();
  const { rows } = await ctx.db.query<KeyRow>(
    `INSERT INTO keys (id, principal_id, algorithm, public_jwk, expires_at) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${COLUMNS}`,
    [id, account.id, algorithm, pair.publicJwk, expiresAt],
  );
  const file = keyFile({ keyId: id, principalId: account.id, baseUrl: ctx.deps.config.baseUrl, pair });
  return {
    status: 201,
    body: { key: { ...renderKey(rows[0] as KeyRow), key_file: file } },
    headers: {
      location: `${API_PREFIX}/workspaces/${workspaceId}/service-accounts/${account.id}/keys/${id}`,
    },
  };
};

/** Revokes a key (it stays listed); revoking a revoked key succeeds again. */
export const deleteKey: Handler<'deleteKey'> = async (ctx) => {
  const { account } = await manageable(ctx);
  const key = await keyOf(ctx.db, account.id, ctx.path.key);
  await ctx.db.query(
    `UPDATE keys SET state = 'revoked', revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE id = $1`,
    [key.id],
  );
  return { status: 204, body: undefined };
};

export const keyHandlers = { listKeys, createKey, deleteKey };
