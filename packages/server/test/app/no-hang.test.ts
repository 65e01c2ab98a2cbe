import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestApp, type TestApp, unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';

/**
 * A request never waits for a second pooled connection while it holds one (design: "nothing waits
 * forever"). The flood that once hung a replica for good: ten PATCHes of one workspace at once, again
 * and again, on the pool as shipped (10) with the workspace-mutation rate limit on. Each PATCH locked
 * the workspace row in its transaction and then counted the mutation on another connection of the
 * same pool; with ten of them holding the pool, the one holding the lock waited for an eleventh.
 */
describePostgres('a flood of locking mutations', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await openTestApp(engine, {
      // The workspace-mutation limit as shipped (120/min); the principal's budget large enough not to refuse.
      env: { SVC_RATE_LIMITS: 'principal=100000/60', SVC_DB_POOL_SIZE: '10' },
    });
  });
  afterAll(() => t.close());

  test('ten PATCHes of each of three workspaces at once, ten times over, all answer', async () => {
    const teams = [await t.team(), await t.team(), await t.team()];
    const statuses = new Map<number, number>();
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        teams.flatMap(({ workspace, owner }) =>
          Array.from({ length: 10 }, () =>
            t.call('PATCH', `/v1/workspaces/${workspace.id}`, {
              token: owner.token,
              key: unique('k'),
              body: { display_name: unique('name') },
            }),
          ),
        ),
      );
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    }
    // 100 mutations of each workspace fit its 120 a minute (the team's set-up counted 3).
    expect(Object.fromEntries(statuses)).toEqual({ 200: 300 });
    const health = await t.call('GET', '/v1/health');
    expect(health.status).toBe(200);
  }, 30_000);
});
