import { randomBytes } from 'node:crypto';
import type { ComputerState } from '../computers/states.js';
import { setLocalAccount } from '../identity/signin/accounts.js';
import type { Database } from '../platform/db/database.js';
import { nestedDatabase } from '../platform/db/nested.js';
import { newId } from '../platform/ids.js';
import {
  addSeedMember,
  insertSeedComputer,
  insertSeedWorkspace,
  recountLiveComputers,
} from './repositories/seed.js';

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
      await insertSeedWorkspace(tx, {
        id,
        name: workspace.name,
        displayName: workspace.display,
        createdBy: ownerId,
      });
      await addSeedMember(tx, id, ownerId, 'owner');
    }
    const demo = ids.demo as string; // set by the loop above
    await addSeedMember(tx, demo, viewerId, 'viewer');
    const computers: [string, ComputerState, string, string, Record<string, string>][] = [
      ['web-1', 'running', 'medium', 'ubuntu-2404', { team: 'web', env: 'prod' }],
      ['web-2', 'running', 'medium', 'ubuntu-2404', { team: 'web', env: 'prod' }],
      ['batch-1', 'stopped', 'large', 'debian-13', { team: 'data' }],
      ['broken-1', 'failed', 'small', 'debian-13', { team: 'data' }],
      ['old-1', 'deleted', 'small', 'ubuntu-2404', {}],
    ];
    for (const [name, state, size, image, labels] of computers) {
      await insertSeedComputer(tx, {
        workspaceId: demo,
        name,
        state,
        size,
        image,
        labels,
        createdBy: ownerId,
      });
    }
    await recountLiveComputers(tx, demo);
    return { workspaces: workspaces.map((w) => w.name), viewer: { email, password } };
  });
}
