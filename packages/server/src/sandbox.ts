import { randomBytes } from 'node:crypto';
import type { Database } from './db/database.js';
import { nestedDatabase } from './db/nested.js';
import { newId } from './ids.js';
import { setLocalAccount } from './signin/accounts.js';

/** What the sandbox's demo data holds, for the start-up message. */
export interface SandboxData {
  workspaces: string[];
  viewer: { email: string; password: string };
}

/**
 * Demo data for `--sandbox` (a stateful mock for frontend teams, in memory): on top of the bootstrap
 * workspace, a `demo` workspace with computers in several resting states (running, stopped, failed,
 * and one deleted), a `demo-staging` workspace, and a viewer account that can read `demo` only.
 * Computers are inserted at rest, so nothing runs until a client acts on them.
 *
 * @example
 * const data = await seedSandbox(db, ownerId);
 */
export async function seedSandbox(db: Database, ownerId: string): Promise<SandboxData> {
  const password = randomBytes(12).toString('base64url');
  const email = 'viewer@svc.localhost';
  return db.transaction(async (tx) => {
    const { principalId: viewerId } = await setLocalAccount(nestedDatabase(tx, db.engine), {
      email,
      password,
      name: 'viewer',
      displayName: 'Demo viewer',
    });
    const workspaces = [
      { name: 'demo', display: 'Demo' },
      { name: 'demo-staging', display: 'Demo staging' },
    ];
    const ids: Record<string, string> = {};
    for (const workspace of workspaces) {
      const id = newId();
      ids[workspace.name] = id;
      await tx.query('INSERT INTO workspaces (id, name, display_name, created_by) VALUES ($1, $2, $3, $4)', [
        id,
        workspace.name,
        workspace.display,
        ownerId,
      ]);
      await tx.query(
        `INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')`,
        [newId(), id, ownerId],
      );
    }
    await tx.query(
      `INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'viewer')`,
      [newId(), ids.demo, viewerId],
    );
    const computers: [string, string, string, string, Record<string, string>][] = [
      ['web-1', 'running', 'medium', 'ubuntu-2404', { team: 'web', env: 'prod' }],
      ['web-2', 'running', 'medium', 'ubuntu-2404', { team: 'web', env: 'prod' }],
      ['batch-1', 'stopped', 'large', 'debian-13', { team: 'data' }],
      ['broken-1', 'failed', 'small', 'debian-13', { team: 'data' }],
      ['old-1', 'deleted', 'small', 'ubuntu-2404', {}],
    ];
    for (const [name, state, size, image, labels] of computers) {
      await tx.query(
        `INSERT INTO computers (id, workspace_id, name, state, size, image, labels, created_by, started_at, stopped_at, deleted_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
                 CASE WHEN $4 = 'running' THEN now() END, CASE WHEN $4 = 'stopped' THEN now() END,
                 CASE WHEN $4 = 'deleted' THEN now() END)`,
        [newId(), ids.demo, name, state, size, image, labels, ownerId],
      );
    }
    await tx.query(
      `UPDATE workspaces SET live_computers = (SELECT count(*) FROM computers WHERE workspace_id = $1 AND state <> 'deleted') WHERE id = $1`,
      [ids.demo],
    );
    return { workspaces: workspaces.map((w) => w.name), viewer: { email, password } };
  });
}
