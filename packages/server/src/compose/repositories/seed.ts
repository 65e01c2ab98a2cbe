import type { JWK } from 'jose';
import type { ComputerState } from '../../computers/states.js';
import type { KeyAlgorithm } from '../../identity/auth/keypair.js';
import type { Role } from '../../identity/roles.js';
import type { Queryable } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';

// Plain inserts for a new database: the first start's workspace, service account and key
// (bootstrap.ts), and the sandbox's demo data (sandbox.ts). None expects a conflict: each fails the
// transaction on one.

/**
 * Holds the first start's lock until the transaction ends, so replicas starting at once on one
 * PostgreSQL bootstrap once (a transaction-scoped advisory lock).
 *
 * @example
 * await lockFirstStart(tx);
 */
export async function lockFirstStart(tx: Queryable): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('svc.bootstrap'))`);
}

/**
 * Inserts a workspace.
 *
 * @example
 * await insertSeedWorkspace(tx, { id, name: 'default', displayName: 'Default workspace', createdBy: userId });
 */
export async function insertSeedWorkspace(
  tx: Queryable,
  workspace: { id: string; name: string; displayName: string; createdBy: string },
): Promise<void> {
  await tx.query('INSERT INTO workspaces (id, name, display_name, created_by) VALUES ($1, $2, $3, $4)', [
    workspace.id,
    workspace.name,
    workspace.displayName,
    workspace.createdBy,
  ]);
}

/**
 * Makes a principal a member of a workspace with `role`.
 *
 * @example
 * await addSeedMember(tx, workspaceId, userId, 'owner');
 */
export async function addSeedMember(
  tx: Queryable,
  workspaceId: string,
  principalId: string,
  role: Role,
): Promise<void> {
  await tx.query('INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, $4)', [
    newId(),
    workspaceId,
    principalId,
    role,
  ]);
}

/**
 * Inserts the bootstrap service account (named `bootstrap`) of the workspace: its principal, then
 * its row.
 *
 * @example
 * await insertBootstrapServiceAccount(tx, { id: serviceAccountId, workspaceId });
 */
export async function insertBootstrapServiceAccount(
  tx: Queryable,
  account: { id: string; workspaceId: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO principals (id, kind, name, display_name) VALUES ($1, 'service_account', 'bootstrap', 'Bootstrap service account')`,
    [account.id],
  );
  await tx.query(`INSERT INTO service_accounts (id, workspace_id, name) VALUES ($1, $2, 'bootstrap')`, [
    account.id,
    account.workspaceId,
  ]);
}

/**
 * Inserts a key's public half, without expiry.
 *
 * @example
 * await insertSeedKey(tx, { id: keyId, principalId, algorithm: pair.algorithm, publicJwk: pair.publicJwk });
 */
export async function insertSeedKey(
  tx: Queryable,
  key: { id: string; principalId: string; algorithm: KeyAlgorithm; publicJwk: JWK },
): Promise<void> {
  await tx.query('INSERT INTO keys (id, principal_id, algorithm, public_jwk) VALUES ($1, $2, $3, $4)', [
    key.id,
    key.principalId,
    key.algorithm,
    key.publicJwk,
  ]);
}

/**
 * Inserts a computer at rest in `state` (nothing runs until a client acts on it), its start, stop or
 * deletion time set to now by its state.
 *
 * @example
 * await insertSeedComputer(tx, { workspaceId, name: 'web-1', state: 'running', size: 'medium', image: 'ubuntu-2404', labels: {}, createdBy });
 */
export async function insertSeedComputer(
  tx: Queryable,
  computer: {
    workspaceId: string;
    name: string;
    state: ComputerState;
    size: string;
    image: string;
    labels: Record<string, string>;
    createdBy: string;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO computers (id, workspace_id, name, state, size, image, labels, created_by, started_at, stopped_at, deleted_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
             CASE WHEN $4 = 'running' THEN now() END, CASE WHEN $4 = 'stopped' THEN now() END,
             CASE WHEN $4 = 'deleted' THEN now() END)`,
    [
      newId(),
      computer.workspaceId,
      computer.name,
      computer.state,
      computer.size,
      computer.image,
      computer.labels,
      computer.createdBy,
    ],
  );
}

/**
 * Sets the workspace's count of live computers (the quota's counter, migration 009) from its rows.
 *
 * @example
 * await recountLiveComputers(tx, workspaceId);
 */
export async function recountLiveComputers(tx: Queryable, workspaceId: string): Promise<void> {
  await tx.query(
    `UPDATE workspaces SET live_computers = (SELECT count(*) FROM computers WHERE workspace_id = $1 AND state <> 'deleted') WHERE id = $1`,
    [workspaceId],
  );
}
