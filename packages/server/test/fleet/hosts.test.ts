import { afterAll, beforeAll, expect, test } from 'vitest';
import { runHostsCommand } from '../../src/compose/commands/hosts.js';
import { Metrics } from '../../src/compose/metrics.js';
import { hostByName, markUnreachableComputers, recordHeartbeat } from '../../src/fleet/repositories/hosts.js';
import { errorOf, openTestApp, type Team, type TestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

// Placement and the operator's command, on the simulated driver: the hosts are rows and their
// heartbeats are written here, so no Engine is needed. The same against real Engines:
// fleet-docker.test.ts.

describeEngines('fleet: hosts and placement (simulated driver)', (engine) => {
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '50', SVC_SIM_FLEET: 'on' } });
    team = await t.team();
  });
  afterAll(() => t.close());

  async function hosts(...argv: string[]) {
    let out = '';
    let err = '';
    const code = await runHostsCommand(argv, {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: (text: string) => (err += text) },
      env: {},
      db: t.db,
    });
    return { code, out, err };
  }
  async function beat(name: string) {
    const host = await hostByName(t.db, name);
    expect(host).toBeDefined();
    expect(await recordHeartbeat(t.db, host?.id as string, `engine-of-${name}`)).toBe(true);
    return host?.id as string;
  }
  const create = (body: Record<string, unknown> = {}, key?: string) =>
    t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
      token: team.editor.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404', ...body },
      ...(key ? { key } : {}),
    });
  async function hostOf(computerId: string): Promise<string | null> {
    const { rows } = await t.db.query<{ host_id: string | null }>(
      'SELECT host_id FROM computers WHERE id = $1',
      [computerId],
    );
    return rows[0]?.host_id ?? null;
  }

  test('a fleet without hosts has no room: 503 no_capacity, nothing created', async () => {
    const answer = await create();
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatchObject({ code: 'unavailable', details: { reason: 'no_capacity' } });
    expect((await t.db.query('SELECT count(*)::int AS n FROM computers')).rows).toEqual([{ n: 0 }]);
  });

  test('usage errors exit 2 with the reason; an unknown host exits 1', async () => {
    expect(await hosts('launch')).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown command: hosts launch'),
    });
    expect(await hosts('add', 'Bad_Name', '--engine', 'unix:///x')).toMatchObject({
      code: 2,
      err: expect.stringContaining('must be a DNS label'),
    });
    expect(
      await hosts(
        'add',
        'h0',
        '--engine',
        'tcp://10.0.0.1:2375',
        '--capacity',
        'vcpus=1,memory_mib=1,computers=1',
      ),
    ).toMatchObject({
      code: 2,
      err: expect.stringContaining('--engine must be unix:///'),
    });
    expect(await hosts('add', 'h0', '--engine', 'unix:///x', '--capacity', 'vcpus=1')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--capacity must give vcpus, memory_mib and computers'),
    });
    expect(await hosts('cordon', 'nowhere')).toMatchObject({
      code: 1,
      err: expect.stringContaining('no host named nowhere'),
    });
    expect((await hosts('--help')).out).toContain('hosts drain <name>');
  });

  test('a registered host takes nothing before its first heartbeat: 503 no_capacity, nothing created', async () => {
    expect(
      await hosts(
        'add',
        'h1',
        '--engine',
        'unix:///run/h1.sock',
        '--capacity',
        'vcpus=8,memory_mib=16384,computers=3',
        '--label',
        'zone=a',
      ),
    ).toMatchObject({ code: 0, out: expect.stringContaining('Registered host h1') });
    expect(
      (
        await hosts(
          'add',
          'h1',
          '--engine',
          'unix:///run/h1.sock',
          '--capacity',
          'vcpus=1,memory_mib=1,computers=1',
        )
      ).err,
    ).toContain('exists already');
    const before = await t.db.query('SELECT count(*)::int AS n FROM computers');
    const answer = await create();
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatchObject({
      code: 'unavailable',
      details: { reason: 'no_capacity', resource: 'computers' },
    });
    expect(answer.headers.get('retry-after')).toBe('30');
    // Host names and counts stay internal. The request id is left out: random, it may spell `h1`.
    const { request_id: _, ...error } = answer.body.error;
    expect(JSON.stringify({ ...answer.body, error })).not.toContain('h1');
    expect((await t.db.query('SELECT count(*)::int AS n FROM computers')).rows).toEqual(before.rows);
  });

  test('with a heartbeat it takes computers up to its capacity; then 503 names the short resource', async () => {
    const h1 = await beat('h1');
    const placed: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await create();
      expect(answer.status).toBe(202);
      placed.push(answer.body.computer.id);
    }
    for (const id of placed) expect(await hostOf(id)).toBe(h1);
    const full = await create();
    expect(full.status).toBe(503);
    expect(errorOf(full).details).toEqual({ reason: 'no_capacity', resource: 'computers' });
    const list = await hosts('list');
    expect(list.out).toMatch(/h1\s+healthy\s+6\/8\s+12288\/16384\s+3\/3\s+zone=a\s+unix:\/\/\/run\/h1\.sock/);
  });

  test('a retry with the same Idempotency-Key after a refusal creates the computer once there is room', async () => {
    const key = unique('key');
    const first = await create({ name: 'retry-box' }, key);
    expect(first.status).toBe(503);
    expect(
      await hosts(
        'add',
        'h2',
        '--engine',
        'unix:///run/h2.sock',
        '--capacity',
        'vcpus=64,memory_mib=262144,computers=10',
        '--label',
        'zone=b',
      ),
    ).toMatchObject({ code: 0 });
    const h2 = await beat('h2');
    const second = await create({ name: 'retry-box' }, key);
    expect(second.status).toBe(202);
    expect(await hostOf(second.body.computer.id)).toBe(h2);
  });

  test('cordon: no new computer lands on the host; uncordon: it takes again', async () => {
    expect(await hosts('cordon', 'h2')).toMatchObject({ code: 0 });
    expect((await hosts('list', '--json')).out).toContain('"state": "cordoned"');
    expect((await create()).status).toBe(503);
    expect(await hosts('uncordon', 'h2')).toMatchObject({ code: 0 });
    expect((await create()).status).toBe(202);
  });

  test('a host without a heartbeat for SVC_HOST_UNHEALTHY_MS: its resting computers are unknown, and no action is allowed', async () => {
    const h1 = (await hostByName(t.db, 'h1'))?.id as string;
    // Every computer on h1 at rest (the simulated driver has run them to running).
    await t.db.query(
      `UPDATE computers SET state = 'running', current_operation_id = NULL WHERE host_id = $1`,
      [h1],
    );
    await t.db.query(`UPDATE host_heartbeats SET seen_at = now() - interval '1 hour' WHERE host_id = $1`, [
      h1,
    ]);
    expect(await markUnreachableComputers(t.db, 30_000)).toBe(3);
    const { rows } = await t.db.query<{ id: string; state: string }>(
      'SELECT id, state FROM computers WHERE host_id = $1',
      [h1],
    );
    expect(rows.map((row) => row.state)).toEqual(['unknown', 'unknown', 'unknown']);
    const id = rows[0]?.id as string;
    const got = await t.call('GET', `/v1/workspaces/${team.workspace.id}/computers/${id}`, {
      token: team.viewer.token,
    });
    expect(got.body.computer.state).toBe('unknown');
    for (const action of ['stop', 'start', 'restart'] as const) {
      const answer = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers/${id}/${action}`, {
        token: team.editor.token,
      });
      expect(answer.status).toBe(409);
      expect(errorOf(answer)).toMatchObject({ code: 'invalid_state', details: { current_state: 'unknown' } });
    }
    // An unhealthy host takes nothing either, though it has room now after a delete would free it.
    expect((await hosts('list')).out).toMatch(/h1\s+unhealthy/);
  });

  test('remove is refused while computers live on the host; an empty host goes', async () => {
    const refused = await hosts('remove', 'h1');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('still holds 3 computers');
    expect(
      await hosts(
        'add',
        'h3',
        '--engine',
        'unix:///run/h3.sock',
        '--capacity',
        'vcpus=1,memory_mib=1024,computers=1',
      ),
    ).toMatchObject({
      code: 0,
    });
    expect(await hosts('remove', 'h3')).toMatchObject({ code: 0, out: 'Removed host h3.\n' });
    expect(await hostByName(t.db, 'h3')).toBeUndefined();
  });

  test("metrics: hosts by state, and each host's used share of each resource", async () => {
    const metrics = new Metrics();
    metrics.watchFleet(t.db, 30_000);
    const { body } = await metrics.render();
    expect(body).toContain('svc_fleet_hosts{state="healthy"} 1');
    expect(body).toContain('svc_fleet_hosts{state="unhealthy"} 1');
    expect(body).toContain('svc_fleet_hosts{state="cordoned"} 0');
    expect(body).toContain('svc_fleet_host_used_ratio{host="h1",resource="computers"} 1');
    expect(body).toContain('svc_fleet_host_used_ratio{host="h1",resource="vcpus"} 0.75');
  });
});

describeEngines('fleet: placement under concurrency (simulated driver)', (engine) => {
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '100', SVC_SIM_FLEET: 'on' } });
    team = await t.team();
  });
  afterAll(() => t.close());

  test('twenty creates at once against room for seven in all: exactly seven are placed, no host overfilled', async () => {
    for (const [name, computers] of [
      ['r1', 3],
      ['r2', 4],
    ] as const) {
      let err = '';
      const code = await runHostsCommand(
        [
          'add',
          name,
          '--engine',
          `unix:///run/${name}.sock`,
          '--capacity',
          `vcpus=100,memory_mib=1000000,computers=${computers}`,
        ],
        {
          stdout: { write: () => true },
          stderr: { write: (text: string) => (err += text) },
          env: {},
          db: t.db,
        },
      );
      expect(err).toBe('');
      expect(code).toBe(0);
      const host = await hostByName(t.db, name);
      await recordHeartbeat(t.db, host?.id as string, `engine-of-${name}`);
    }
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
          token: team.editor.token,
          body: { name: unique('race'), size: 'small', image: 'ubuntu-2404' },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(7);
    // The rest: no room (503), or a lock wait that ran past its bound (also 503).
    expect(statuses.filter((status) => status !== 202).every((status) => status === 503)).toBe(true);
    const { rows } = await t.db.query<{ name: string; live: number; capacity: number }>(
      `SELECT h.name, count(c.id)::int AS live, h.capacity_computers AS capacity
         FROM hosts h LEFT JOIN computers c ON c.host_id = h.id AND c.deleted_at IS NULL
        GROUP BY h.name, h.capacity_computers ORDER BY h.name`,
    );
    expect(rows).toEqual([
      { name: 'r1', live: 3, capacity: 3 },
      { name: 'r2', live: 4, capacity: 4 },
    ]);
  });
});
