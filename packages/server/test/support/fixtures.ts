import type { KeyAlgorithm, KeyFile } from '../../src/identity/auth/keypair.js';
import { generateServiceAccountKey, keyFile } from '../../src/identity/auth/keypair.js';
import type { Queryable } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';

export const BASE_URL = 'https://svc.test/v1';
export const TOKEN_URL = `${BASE_URL}/auth/token`;

/** A user who owns a workspace, straight in SQL (the handlers that do this come later). */
export async function createWorkspace(db: Queryable): Promise<{ userId: string; workspaceId: string }> {
  const userId = newId();
  const workspaceId = newId();
  await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [
    userId,
    `user-${userId}`,
  ]);
  await db.query(`INSERT INTO workspaces (id, name, created_by) VALUES ($1, $2, $3)`, [
    workspaceId,
    `ws-${workspaceId}`,
    userId,
  ]);
  await db.query(`INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')`, [
    newId(),
    workspaceId,
    userId,
  ]);
  return { userId, workspaceId };
}

/** A service account in a fresh workspace. */
export async function createServiceAccount(
  db: Queryable,
): Promise<{ principalId: string; workspaceId: string }> {
  const { workspaceId } = await createWorkspace(db);
  const principalId = newId();
  await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'service_account', 'robot')`, [
    principalId,
  ]);
  await db.query(`INSERT INTO service_accounts (id, workspace_id, name) VALUES ($1, $2, 'robot')`, [
    principalId,
    workspaceId,
  ]);
  await db.query(`INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'editor')`, [
    newId(),
    workspaceId,
    principalId,
  ]);
  return { principalId, workspaceId };
}

/** A stored key for `principalId`, returned as the key file its owner would hold. */
export async function addKey(
  db: Queryable,
  principalId: string,
  options: { algorithm?: KeyAlgorithm; expiresAt?: Date } = {},
): Promise<KeyFile> {
  const pair = await generateServiceAccountKey(options.algorithm ?? 'EdDSA');
  const keyId = newId();
  await db.query(
    `INSERT INTO keys (id, principal_id, algorithm, public_jwk, expires_at) VALUES ($1, $2, $3, $4, $5)`,
    [keyId, principalId, pair.algorithm, pair.publicJwk, options.expiresAt ?? null],
  );
  return keyFile({ keyId, principalId, baseUrl: BASE_URL, pair });
}
