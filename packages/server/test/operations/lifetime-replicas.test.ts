// The lifetime check on two replicas of one PostgreSQL database with one clock (design §4.1): both
// check at once, again and again, and every computer past its idle timeout or its expiry gets exactly
// one operation with its trigger.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type App, createApp } from '../../src/compose/app.js';
import { newId } from '../../src/platform/ids.js';
import { unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';
import { callReplica, replicaConfig } from '../support/replicas.js';

describePostgres('the lifetime check on two replicas', (engine) => {
  let one: App;
  let two: App;
  let owner: string;
  let ws: string;
  let offset = 0;
  const clock = () => Date.now() + offset;
  beforeAll(async () => {
    const first = await engine.open();
    const second = await engine.replica(first);
    // The check runs when the test calls it (both replicas at once), never by itself.
    const config = { ...replicaConfig, lifetimeCheckMs: 600_000 };
    one = await createApp({ config, db: first, responseValidation: 'throw', lifetimeClock: clock });
    two = await createApp({ config, db: second, responseValidation: 'throw', lifetimeClock: clock });
    await one.start();
    await two.start();
    const id = newId();
    await one.db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [id, unique('u')]);
    owner = (await one.deps.tokens.issue(id)).access_token;
    const created = await callReplica(one, 'POST', '/v1/workspaces', owner, { name: unique('ws') });
    ws = `/v1/workspaces/${created.body.workspace.id}`;
  });
  afterAll(async () => {
    for (const app of [one, two]) await app?.close();
  });

  async function create(lifetime: Record<string, unknown>): Promise<string> {
    const made = await callReplica(one, 'POST', `${ws}/computers`, owner, {
      name: unique('c'),
      size: 'small',
      image: 'ubuntu-2404',
      lifetime,
    });
    expect(made.status).toBe(202);
    await callReplica(one, 'GET', `/v1/operations/${made.body.operations[0].id}?wait=10`, owner);
    return made.body.computer.id;
  }

  test('each end is enforced exactly once: one operation per computer, whichever replica starts it', async () => {
    const idle = await Promise.all([1, 2, 3, 4].map(() => create({ idle_timeout_seconds: 60 })));
    const expiring = await Promise.all(
      [1, 2, 3].map(() => create({ expires_at: new Date(clock() + 90_000).toISOString(), on_end: 'delete' })),
    );
    offset += 120_000;
    const checks = [];
    for (let round = 0; round < 4; round++) checks.push(one.lifetimes.checkOnce(), two.lifetimes.checkOnce());
    const started = (await Promise.all(checks)).flat();
    const { rows } = await one.db.query<{ target_id: string; type: string; trigger: string }>(
      `SELECT target_id, type, trigger FROM operations WHERE target_id = ANY($1) AND trigger IS NOT NULL`,
      [[...idle, ...expiring]],
    );
    for (const id of idle)
      expect(rows.filter((r) => r.target_id === id)).toEqual([
        { target_id: id, type: 'computer.stop', trigger: 'idle_timeout' },
      ]);
    for (const id of expiring)
      expect(rows.filter((r) => r.target_id === id)).toEqual([
        { target_id: id, type: 'computer.delete', trigger: 'expiry' },
      ]);
    expect(started).toHaveLength(idle.length + expiring.length);
    // Run to the end, a later check on either replica starts nothing more.
    for (const operation of started)
      await callReplica(two, 'GET', `/v1/operations/${operation.id}?wait=10`, owner);
    expect([...(await one.lifetimes.checkOnce()), ...(await two.lifetimes.checkOnce())]).toEqual([]);
    for (const id of idle)
      expect((await callReplica(two, 'GET', `${ws}/computers/${id}`, owner)).body.computer.state).toBe(
        'stopped',
      );
    for (const id of expiring)
      expect((await callReplica(two, 'GET', `${ws}/computers/${id}`, owner)).body.computer.state).toBe(
        'deleted',
      );
  });
});
