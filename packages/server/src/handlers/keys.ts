import { renderKey } from '../computers/render.js';
import { judgeReach } from '../identity/access.js';
import type { KeyAlgorithm } from '../identity/auth/keypair.js';
import { generateServiceAccountKey, keyFile } from '../identity/auth/keypair.js';
import { countActiveKeys, insertKey, keyOf, listKeyRows, revokeKey } from '../identity/repositories/keys.js';
import {
  type ServiceAccountRow,
  serviceAccountWithReach,
} from '../identity/repositories/service-accounts.js';
import { invalidArgument } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { API_PREFIX, permittedWorkspace, quotaExceeded } from './common.js';
import type { KeyDeps } from './deps.js';
import type { Ctx, Handler } from './types.js';

/**
 * The workspace and service account of a keys route, checked for `manage`. A key acts with every role
 * the service account holds, in any workspace, so managing its keys needs at least that role in each
 * of them (an `owner` service account needs an owner; one that is owner of another workspace needs an
 * owner there): see {@link judgeReach}.
 */
async function manageable(
  ctx: Ctx<'createKey', KeyDeps> | Ctx<'deleteKey', KeyDeps>,
): Promise<{ workspaceId: string; account: ServiceAccountRow }> {
  const { workspace } = await permittedWorkspace(ctx);
  const { account, reach } = await serviceAccountWithReach(
    ctx.db,
    workspace.id,
    ctx.path.service_account,
    ctx.principal.id,
    { lock: true },
  );
  judgeReach(reach, 'match');
  await ctx.countMutation(workspace.id);
  return { workspaceId: workspace.id, account };
}

export const listKeys: Handler<'listKeys', KeyDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  // Its keys (and when they were last used) concern every workspace it acts in.
  const { account, reach } = await serviceAccountWithReach(
    ctx.db,
    workspace.id,
    ctx.path.service_account,
    ctx.principal.id,
  );
  judgeReach(reach, 'read');
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listKeys', service_account: account.id });
  const rows = await listKeyRows(ctx.db, account.id, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { keys: items.map(renderKey), next_cursor, has_more } };
};

/** A new key pair; the answer carries the key file with the private key, once (stored only for replay). */
export const createKey: Handler<'createKey', KeyDeps> = async (ctx) => {
  const { workspaceId, account } = await manageable(ctx);
  const algorithm: KeyAlgorithm = ctx.body?.algorithm ?? 'EdDSA';
  const expiresAt = ctx.body?.expires_at === undefined ? null : new Date(ctx.body.expires_at);
  if (expiresAt && expiresAt.getTime() <= Date.now())
    throw invalidArgument([{ field: 'expires_at', description: 'must be in the future' }]);
  const limit = ctx.deps.config.quotas.activeKeysPerServiceAccount;
  if ((await countActiveKeys(ctx.db, account.id)) >= limit)
    throw quotaExceeded(
      'active_keys_per_service_account',
      limit,
      `service account ${account.name} already has ${limit} active keys; revoke one first`,
    );
  const pair = await generateServiceAccountKey(algorithm);
  const id = newId();
  const row = await insertKey(ctx.db, {
    id,
    accountId: account.id,
    algorithm,
    publicJwk: pair.publicJwk,
    expiresAt,
  });
  const file = keyFile({ keyId: id, principalId: account.id, baseUrl: ctx.deps.config.baseUrl, pair });
  return {
    status: 201,
    body: { key: { ...renderKey(row), key_file: file } },
    headers: {
      location: `${API_PREFIX}/workspaces/${workspaceId}/service-accounts/${account.id}/keys/${id}`,
    },
  };
};

/** Revokes a key (it stays listed); revoking a revoked key succeeds again. */
export const deleteKey: Handler<'deleteKey', KeyDeps> = async (ctx) => {
  const { account } = await manageable(ctx);
  const key = await keyOf(ctx.db, account.id, ctx.path.key);
  await revokeKey(ctx.db, key.id);
  return { status: 204, body: undefined };
};

export const keyHandlers = { listKeys, createKey, deleteKey };
