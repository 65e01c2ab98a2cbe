// The fan-out of a workspace's event log to its endpoints, called directly (the app's own dispatcher
// is stopped): exactly once under concurrent passes, cursors that follow retention and disabling.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { lastWorkspaceEventSequence } from '../../src/computers/repositories/events.js';
import { fanOut } from '../../src/webhooks/dispatcher.js';
import { openTestApp, type Team, type TestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

describeEngines('webhooks: fan-out', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true' } });
    await t.app.webhooks.dispatcher.stop();
    await t.app.webhooks.worker.stop();
  }, 60_000);
  afterAll(() => t.close());

  const base = (team: Team) => `/v1/workspaces/${team.workspace.id}/webhook-endpoints`;
  async function endpoint(team: Team, eventTypes = ['*']): Promise<string> {
    const created = await t.call('POST', base(team), {
      token: team.admin.token,
      body: { url: 'http://127.0.0.1:9/never', event_types: eventTypes },
    });
    expect(created.status).toBe(201);
    return created.body.webhook_endpoint.id;
  }
  const touch = async (team: Team, times = 1) => {
    for (let i = 0; i < times; i++)
      await t.call('PATCH', `/v1/workspaces/${team.workspace.id}`, {
        token: team.owner.token,
        body: { display_name: unique('n') },
      });
  };
  const cursor = async (id: string) =>
    (await t.db.query<{ q: number }>('SELECT queued_through AS q FROM webhook_endpoints WHERE id = $1', [id]))
      .rows[0]?.q;
  const queued = async (id: string) =>
    (
      await t.db.query<{ event_id: string }>(
        'SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_sequence',
        [id],
      )
    ).rows.map((r) => r.event_id);

  test('concurrent passes queue each event exactly once, in order', async () => {
    const team = await t.team();
    const id = await endpoint(team);
    await touch(team, 5);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => fanOut(t.db, team.workspace.id, new Date())),
    );
    expect(results.reduce((n, r) => n + r.queued, 0)).toBe(5);
    expect(new Set(await queued(id)).size).toBe(5);
    expect(await cursor(id)).toBe(await lastWorkspaceEventSequence(t.db, team.workspace.id));
  });

  test('an endpoint starts after the events before its creation; event_types filter', async () => {
    const team = await t.team();
    await touch(team, 2);
    const id = await endpoint(team, ['member.created']);
    expect(await cursor(id)).toBe(await lastWorkspaceEventSequence(t.db, team.workspace.id));
    await touch(team, 2);
    await fanOut(t.db, team.workspace.id, new Date());
    expect(await queued(id)).toEqual([]);
    expect(await cursor(id)).toBe(await lastWorkspaceEventSequence(t.db, team.workspace.id));
  });

  test('a disabled endpoint skips what happens meanwhile; events taken by retention are skipped', async () => {
    const team = await t.team();
    const id = await endpoint(team);
    await t.call('POST', `${base(team)}/${id}/disable`, { token: team.admin.token });
    await touch(team, 2);
    await fanOut(t.db, team.workspace.id, new Date());
    expect(await queued(id)).toEqual([]);
    expect(await cursor(id)).toBe(await lastWorkspaceEventSequence(t.db, team.workspace.id));
    await t.call('POST', `${base(team)}/${id}/enable`, { token: team.admin.token });
    await touch(team, 2);
    await t.db.query('DELETE FROM workspace_events WHERE workspace_id = $1', [team.workspace.id]);
    await fanOut(t.db, team.workspace.id, new Date());
    expect(await queued(id)).toEqual([]);
    expect(await cursor(id)).toBe(await lastWorkspaceEventSequence(t.db, team.workspace.id));
  });
});
