import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, openTestApp, unique } from '../support/app.js';
import { describeEngines, describePostgres } from '../support/databases.js';

describeEngines('handlers: computers and operations', (engine) => {
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    t = await openTestApp(engine, {
      env: { SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '4', SVC_QUOTA_LABELS_PER_COMPUTER: '2' },
    });
    team = await t.team();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.id}`;
  const token = () => team.editor.token;

  async function settle(operationId: string) {
    const answer = await t.call('GET', `/v1/operations/${operationId}?wait=10`, { token: token() });
    expect(answer.status).toBe(200);
    return answer.body.operation;
  }
  async function create(labels: Record<string, string> = {}) {
    const answer = await t.call('POST', `${ws()}/computers`, {
      token: token(),
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404', labels },
    });
    expect(answer.status).toBe(202);
    return answer;
  }

  test('create: 202 with the computer (creating), its operation, Location and Retry-After; ?wait sees it succeed', async () => {
    const answer = await create({ team: 'web' });
    const [operation] = answer.body.operations;
    expect(answer.body.computer.state).toBe('creating');
    expect(operation).toMatchObject({
      type: 'computer.create',
      target: { type: 'computer', id: answer.body.computer.id },
    });
    expect(answer.headers.get('location')).toBe(`/v1/operations/${operation.id}`);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect((await settle(operation.id)).state).toBe('succeeded');
    const read = await t.call('GET', `${ws()}/computers/${answer.body.computer.name}`, {
      token: team.viewer.token,
    });
    expect(read.body.computer).toMatchObject({ state: 'running', started_at: expect.any(String) });
    // The create's answer renders a Date, a read the database's text: the same instant, the same text.
    expect(read.body.computer.created_at).toBe(answer.body.computer.created_at);
  });

  test('the state machine: 409 invalid_state with details, 409 operation_in_progress while one runs', async () => {
    const created = await create();
    const path = `${ws()}/computers/${created.body.computer.id}`;
    const busy = await t.call('POST', `${path}/stop`, { token: token() });
    expect(busy.status).toBe(409);
    expect(errorOf(busy)).toMatchObject({
      code: 'operation_in_progress',
      details: { operation_id: created.body.operations[0].id },
    });
    await settle(created.body.operations[0].id);
    const start = await t.call('POST', `${path}/start`, { token: token() });
    expect(errorOf(start)).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'running', allowed_from: ['stopped', 'failed'] },
    });
    const stop = await t.call('POST', `${path}/stop`, { token: token() });
    expect(stop.status).toBe(202);
    await settle(stop.body.operations[0].id);
    expect(errorOf(await t.call('POST', `${path}/restart`, { token: token() }))).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'stopped', allowed_from: ['running'] },
    });
    const deleted = await t.call('DELETE', path, { token: token() });
    expect(deleted.status).toBe(202);
    await settle(deleted.body.operations[0].id);
    const gone = await t.call('GET', path, { token: token() });
    expect(gone.body.computer.state).toBe('deleted');
    expect(
      errorOf(await t.call('GET', `${ws()}/computers/${created.body.computer.name}`, { token: token() }))
        .code,
    ).toBe('not_found');
    expect(errorOf(await t.call('PATCH', path, { token: token(), body: { labels: {} } })).code).toBe(
      'invalid_state',
    );
  });

  test('a failing driver action is reported on the operation, not as an HTTP error; failed computers start again', async () => {
    const created = await create({ 'sim-fail': 'create' });
    const operation = await settle(created.body.operations[0].id);
    expect(operation).toMatchObject({
      state: 'failed',
      error: { code: 'internal', request_id: operation.id },
    });
    const path = `${ws()}/computers/${created.body.computer.id}`;
    expect((await t.call('GET', path, { token: token() })).body.computer.state).toBe('failed');
    await t.call('PATCH', path, { token: token(), body: { labels: {} } });
    const start = await t.call('POST', `${path}/start`, { token: token() });
    expect((await settle(start.body.operations[0].id)).state).toBe('succeeded');
    const del = await t.call('DELETE', path, { token: token() });
    await settle(del.body.operations[0].id);
  });

  test('authorization: a viewer may read but not act (403); an outsider gets 404', async () => {
    const denied = await t.call('POST', `${ws()}/computers`, {
      token: team.viewer.token,
      body: { name: unique('v'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(errorOf(denied).code).toBe('permission_denied');
    expect((await t.call('GET', `${ws()}/computers`, { token: team.viewer.token })).status).toBe(200);
    expect(errorOf(await t.call('GET', `${ws()}/computers`, { token: team.outsider.token })).code).toBe(
      'not_found',
    );
    const ops = await t.call('GET', `${ws()}/operations?limit=1`, { token: team.viewer.token });
    const op = ops.body.operations[0].id;
    expect(errorOf(await t.call('GET', `/v1/operations/${op}`, { token: team.outsider.token })).code).toBe(
      'not_found',
    );
  });

  test('bad values: unknown size or image, too many labels, a taken name', async () => {
    const bad = await t.call('POST', `${ws()}/computers`, {
      token: token(),
      body: { name: unique('b'), size: 'huge', image: 'ubuntu-2404' },
    });
    expect(errorOf(bad)).toMatchObject({
      code: 'invalid_argument',
      details: { field_violations: [{ field: 'size' }] },
    });
    const labels = await t.call('POST', `${ws()}/computers`, {
      token: token(),
      body: { name: unique('b'), size: 'small', image: 'debian-13', labels: { a: '1', b: '2', c: '3' } },
    });
    expect(errorOf(labels)).toMatchObject({ code: 'quota_exceeded', details: { limit: 2 } });
    const first = await create();
    const taken = await t.call('POST', `${ws()}/computers`, {
      token: token(),
      body: { name: first.body.computer.name, size: 'small', image: 'debian-13' },
    });
    expect(errorOf(taken).code).toBe('already_exists');
    // The catalogue is checked by the insert itself: both unknowns are named, a taken name with an
    // unknown size is still a bad value (the insert inserted nothing), and nothing is written.
    const before = await t.db.query('SELECT id FROM computers WHERE workspace_id = $1', [team.workspace.id]);
    const both = await t.call('POST', `${ws()}/computers`, {
      token: token(),
      body: { name: first.body.computer.name, size: 'huge', image: 'windows-95' },
    });
    expect(errorOf(both)).toMatchObject({
      code: 'invalid_argument',
      details: { field_violations: [{ field: 'size' }, { field: 'image' }] },
    });
    const after = await t.db.query('SELECT id FROM computers WHERE workspace_id = $1', [team.workspace.id]);
    expect(after.rows).toEqual(before.rows);
    await settle(first.body.operations[0].id);
  });

  test('quota: live computers per workspace → 403 quota_exceeded with details', async () => {
    const local = await t.team();
    const path = `/v1/workspaces/${local.workspace.id}/computers`;
    const body = () => ({ name: unique('q'), size: 'small', image: 'debian-13' });
    for (let i = 0; i < 4; i++)
      expect((await t.call('POST', path, { token: local.owner.token, body: body() })).status).toBe(202);
    const written = async () => {
      const { rows } = await t.db.query<{ counter: number; computers: number; operations: number }>(
        `SELECT w.live_computers AS counter,
                (SELECT count(*)::int FROM computers c WHERE c.workspace_id = w.id) AS computers,
                (SELECT count(*)::int FROM operations o WHERE o.workspace_id = w.id) AS operations
           FROM workspaces w WHERE w.id = $1`,
        [local.workspace.id],
      );
      return rows[0]!;
    };
    const before = await written();
    expect(before).toEqual({ counter: 4, computers: 4, operations: 4 });
    const key = `over-${unique('k')}`;
    const refused = body();
    const over = await t.call('POST', path, { token: local.owner.token, body: refused, key });
    expect(errorOf(over)).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'computers_per_workspace', limit: 4 },
    });
    // The refusal comes from the transaction's last statement (sent with its COMMIT on PostgreSQL):
    // everything the create wrote before it rolled back, and a 403 is not stored with its key.
    expect(await written()).toEqual(before);
    const { rows: named } = await t.db.query('SELECT 1 FROM computers WHERE name = $1', [refused.name]);
    expect(named).toEqual([]);
    const { rows: records } = await t.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
    expect(records).toEqual([]);
    const busy = await t.call('DELETE', `/v1/workspaces/${local.workspace.id}`, { token: local.owner.token });
    expect(errorOf(busy).code).toBe('invalid_state');
  });

  describe('lists and filters', () => {
    let local: Team;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      local = await t.team();
      const path = `/v1/workspaces/${local.workspace.id}/computers`;
      for (const [name, labels] of [
        ['a', { env: 'prod' }],
        ['b', { env: 'dev' }],
        ['c', { env: 'prod' }],
      ] as const) {
        const answer = await t.call('POST', path, {
          token: local.owner.token,
          body: { name, size: 'small', image: 'debian-13', labels },
        });
        ids[name] = answer.body.computer.id;
        await t.call('GET', `/v1/operations/${answer.body.operations[0].id}?wait=10`, {
          token: local.owner.token,
        });
      }
      const stop = await t.call('POST', `${path}/b/stop`, { token: local.owner.token });
      await t.call('GET', `/v1/operations/${stop.body.operations[0].id}?wait=10`, {
        token: local.owner.token,
      });
      const del = await t.call('DELETE', `${path}/c`, { token: local.owner.token });
      await t.call('GET', `/v1/operations/${del.body.operations[0].id}?wait=10`, {
        token: local.owner.token,
      });
    });
    const list = async (query: string) => {
      const answer = await t.call('GET', `/v1/workspaces/${local.workspace.id}/computers?${query}`, {
        token: local.viewer.token,
      });
      expect(answer.status).toBe(200);
      return answer.body.computers.map((c: { id: string }) => c.id);
    };

    test.each([
      ['no filter (deleted left out)', '', ['b', 'a']],
      ['include_deleted', 'include_deleted=true', ['c', 'b', 'a']],
      ['state', 'state=stopped', ['b']],
      ['label', 'label=env=prod', ['a']],
      ['label with include_deleted', 'label=env=prod&include_deleted=true', ['c', 'a']],
    ])('%s', async (_, query, want) => {
      expect(await list(query)).toEqual(want.map((name) => ids[name]));
    });

    test('a cursor bound to one filter is refused with another', async () => {
      const first = await t.call(
        'GET',
        `/v1/workspaces/${local.workspace.id}/computers?limit=1&include_deleted=true`,
        {
          token: local.viewer.token,
        },
      );
      const cursor = first.body.next_cursor;
      expect(cursor).toEqual(expect.any(String));
      const next = await list(`limit=1&include_deleted=true&cursor=${cursor}`);
      expect(next).toEqual([ids.b]);
      const other = await t.call('GET', `/v1/workspaces/${local.workspace.id}/computers?cursor=${cursor}`, {
        token: local.viewer.token,
      });
      expect(errorOf(other).code).toBe('invalid_argument');
    });

    test('operations: filter by target and state', async () => {
      const path = `/v1/workspaces/${local.workspace.id}/operations`;
      const byTarget = await t.call('GET', `${path}?target_id=${ids.b}`, { token: local.viewer.token });
      expect(byTarget.body.operations.map((o: { type: string }) => o.type)).toEqual([
        'computer.stop',
        'computer.create',
      ]);
      const failed = await t.call('GET', `${path}?state=failed`, { token: local.viewer.token });
      expect(failed.body.operations).toEqual([]);
    });
  });

  test('?wait long-polls until the operation is final, and answers as it stands when time runs out', async () => {
    const created = await create();
    const started = Date.now();
    const quick = await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=0`, {
      token: token(),
    });
    expect(['pending', 'running']).toContain(quick.body.operation.state);
    const done = await settle(created.body.operations[0].id);
    expect(done.state).toBe('succeeded');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

// The quota's counter (migration 009) is taken by the create's last statement, without a lock held
// from the start: concurrent creates must still never exceed it, nor a deletion leak a place.
describePostgres('handlers: computers — the live-computers quota under concurrency', (engine) => {
  const N = 12;
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    t = await openTestApp(engine, {
      env: { SVC_QUOTA_COMPUTERS_PER_WORKSPACE: String(N - 1), SVC_RATE_LIMITS: 'off' },
    });
    team = await t.team();
  });
  afterAll(() => t.close());
  const path = () => `/v1/workspaces/${team.workspace.id}/computers`;
  const live = async () => {
    const { rows } = await t.db.query<{ counter: number; counted: number }>(
      `SELECT w.live_computers AS counter,
              (SELECT count(*)::int FROM computers c WHERE c.workspace_id = w.id AND c.state <> 'deleted') AS counted
         FROM workspaces w WHERE w.id = $1`,
      [team.workspace.id],
    );
    return rows[0]!;
  };

  test(`${N} creates racing for ${N - 1} places: exactly ${N - 1} succeed, the rest 403 quota_exceeded`, async () => {
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        t.call('POST', path(), {
          token: team.editor.token,
          body: { name: unique('race'), size: 'small', image: 'debian-13' },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(N - 1);
    const refused = answers.filter((a) => a.status !== 202);
    expect(refused.map((a) => errorOf(a))).toEqual([
      expect.objectContaining({
        code: 'quota_exceeded',
        details: { quota: 'computers_per_workspace', limit: N - 1 },
      }),
    ]);
    expect(await live()).toEqual({ counter: N - 1, counted: N - 1 });
    for (const answer of answers.filter((a) => a.status === 202))
      await t.call('GET', `/v1/operations/${answer.body.operations[0].id}?wait=10`, {
        token: team.editor.token,
      });
  });

  test('a deleted computer frees its place; two creates of one name: one 202, one 409 already_exists', async () => {
    const list = await t.call('GET', `${path()}?limit=1`, { token: team.editor.token });
    const victim = list.body.computers[0].id;
    const deletion = await t.call('DELETE', `${path()}/${victim}`, { token: team.editor.token });
    expect(deletion.status).toBe(202);
    const done = await t.call('GET', `/v1/operations/${deletion.body.operations[0].id}?wait=10`, {
      token: team.editor.token,
    });
    expect(done.body.operation.state).toBe('succeeded');
    expect(await live()).toEqual({ counter: N - 2, counted: N - 2 });
    const name = unique('twin');
    const twins = await Promise.all(
      [0, 1].map(() =>
        t.call('POST', path(), {
          token: team.editor.token,
          body: { name, size: 'small', image: 'debian-13' },
        }),
      ),
    );
    expect(twins.map((a) => a.status).sort()).toEqual([202, 409]);
    expect(errorOf(twins.find((a) => a.status === 409)!).code).toBe('already_exists');
    expect(await live()).toEqual({ counter: N - 1, counted: N - 1 });
  });
});
