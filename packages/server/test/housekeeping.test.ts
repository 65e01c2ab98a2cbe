import { beforeAll, expect, test } from 'vitest';
import { housekeeping } from '../src/compose/housekeeping.js';
import type { Database } from '../src/platform/db/database.js';
import { newId } from '../src/platform/ids.js';
import { describeEngines } from './support/databases.js';
import { createWorkspace } from './support/fixtures.js';

describeEngines('housekeeping', (engine) => {
  // Opened before the test, under the hook's longer bound: PGlite's start-up is slow on a loaded machine.
  let db: Database;
  beforeAll(async () => {
    db = await engine.open();
  });

  test('removes expired jtis, idempotency records over 24 h and computers deleted over 7 days ago, nothing else', async () => {
    const { workspaceId, userId } = await createWorkspace(db);
    await db.query(
      `INSERT INTO assertion_jtis VALUES ($1, 'old', now() - interval '1 second'), ($1, 'live', now() + interval '1 minute')`,
      [userId],
    );
    await db.query(
      `INSERT INTO idempotency_keys (principal_id, key, fingerprint, state, owner, locked_until, created_at)
       VALUES ($1, 'old', 'f', 'done', 'o', now(), now() - interval '25 hours'), ($1, 'live', 'f', 'done', 'o', now(), now())`,
      [userId],
    );
    const computer = (name: string, state: string, deletedAgo: string | null) =>
      db.query(
        `INSERT INTO computers (id, workspace_id, name, state, size, image, created_by, deleted_at)
         VALUES ($1, $2, $3, $4, 'small', 'ubuntu-2404', $5, now() - $6::interval)`,
        [newId(), workspaceId, name, state, userId, deletedAgo],
      );
    await computer('gone', 'deleted', '8 days');
    await computer('recent', 'deleted', '6 days');
    await computer('live', 'running', null);
    expect(await housekeeping(db)).toEqual({
      jtis: 1,
      idempotencyKeys: 1,
      computers: 1,
      events: 0,
      output: 0,
      webhookDeliveries: 0,
    });
    const { rows } = await db.query<{ name: string }>(
      'SELECT name FROM computers WHERE workspace_id = $1 ORDER BY name',
      [workspaceId],
    );
    expect(rows.map((row) => row.name)).toEqual(['live', 'recent']);
    expect(await housekeeping(db)).toEqual({
      jtis: 0,
      idempotencyKeys: 0,
      computers: 0,
      events: 0,
      output: 0,
      webhookDeliveries: 0,
    });
  });
});
