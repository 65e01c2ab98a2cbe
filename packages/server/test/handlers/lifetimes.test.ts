// Computer lifetimes (design §4.1) through the API, on the simulated driver with a clock the test
// moves: validation and bounds, the workspace's defaults, PATCH to extend or clear, the idle timeout
// and the expiry ending a computer (with its trigger, its events), activity postponing the idle stop;
// and recovery from failed for each outcome the simulated engine can report.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { forgetActivity } from '../../src/computers/repositories/lifetimes.js';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

const DAY = 86_400_000;

describeEngines('handlers: computer lifetimes and recovery', (engine) => {
  let t: TestApp;
  let team: Team;
  // The lifetime clock: real time plus what the tests add (never behind the database's now(), which
  // stamps a start's activity).
  let offset = 0;
  const clock = () => Date.now() + offset;
  beforeAll(async () => {
    forgetActivity();
    t = await openTestApp(engine, {
      // The check runs when a test calls it, never by itself.
      env: { SVC_LIFETIME_CHECK_MS: '600000' },
      app: { lifetimeClock: clock },
    });
    team = await t.team();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.id}`;
  const token = () => team.editor.token;
  const later = (ms: number) => {
    offset += ms;
  };
  const iso = (ms: number) => new Date(ms).toISOString();

  async function settle(operationId: string) {
    const answer = await t.call('GET', `/v1/operations/${operationId}?wait=10`, { token: token() });
    expect(answer.status).toBe(200);
    return answer.body.operation;
  }
  async function create(body: Record<string, unknown> = {}, labels: Record<string, string> = {}) {
    const answer = await t.call('POST', `${ws()}/computers`, {
      token: token(),
      body: { name: unique('life'), size: 'small', image: 'ubuntu-2404', labels, ...body },
    });
    expect(answer.status).toBe(202);
    await settle(answer.body.operations[0].id);
    return answer.body.computer as { id: string; name: string; lifetime?: Record<string, unknown> };
  }
  const read = async (id: string) =>
    (await t.call('GET', `${ws()}/computers/${id}`, { token: token() })).body.computer;
  /** The operations the service started on a computer by itself. */
  async function triggered(id: string) {
    const answer = await t.call('GET', `${ws()}/operations?target_id=${id}`, { token: token() });
    expect(answer.status).toBe(200);
    return (answer.body.operations as { trigger?: string }[]).filter((o) => o.trigger !== undefined);
  }

  test('bounds: an idle timeout under 60 s or over 30 days, an expiry past or beyond 30 days: 400 with field_violations', async () => {
    for (const [lifetime, field] of [
      [{ idle_timeout_seconds: 59 }, 'idle_timeout_seconds'],
      [{ idle_timeout_seconds: 2_592_001 }, 'idle_timeout_seconds'],
      [{ on_end: 'explode' }, 'on_end'],
      [{}, 'lifetime'],
      [{ expires_at: iso(clock() - 1000) }, 'lifetime.expires_at'],
      [{ expires_at: iso(clock() + 31 * DAY) }, 'lifetime.expires_at'],
    ] as const) {
      const answer = await t.call('POST', `${ws()}/computers`, {
        token: token(),
        body: { name: unique('bad'), size: 'small', image: 'ubuntu-2404', lifetime },
      });
      const error = errorOf(answer);
      expect(answer.status).toBe(400);
      expect(error.code).toBe('invalid_argument');
      expect(
        (error.details.field_violations as { field: string }[]).some((v) => v.field.includes(field)),
      ).toBe(true);
    }
  });

  test('create with a lifetime renders it; without one (and no defaults) there is none', async () => {
    const plain = await create();
    expect(plain.lifetime).toBeUndefined();
    expect((await read(plain.id)).lifetime).toBeUndefined();
    const expires = iso(clock() + DAY);
    const timed = await create({ lifetime: { idle_timeout_seconds: 1800, expires_at: expires } });
    expect(timed.lifetime).toEqual({
      idle_timeout_seconds: 1800,
      expires_at: expires,
      on_end: 'stop',
      last_active_at: expect.any(String),
    });
    expect((await read(timed.id)).lifetime).toMatchObject({
      idle_timeout_seconds: 1800,
      expires_at: expires,
    });
  });

  test("the workspace's defaults apply to what a create leaves out; owner only; null clears them", async () => {
    const path = `/v1/workspaces/${team.workspace.id}`;
    const defaults = { idle_timeout_seconds: 3600, max_lifetime_seconds: 86_400, on_end: 'delete' };
    expect(
      errorOf(await t.call('PATCH', path, { token: team.admin.token, body: { lifetime_defaults: defaults } }))
        .code,
    ).toBe('permission_denied');
    const set = await t.call('PATCH', path, {
      token: team.owner.token,
      body: { lifetime_defaults: defaults },
    });
    expect(set.status).toBe(200);
    expect(set.body.workspace.lifetime_defaults).toEqual(defaults);
    expect(
      (await t.call('GET', path, { token: team.viewer.token })).body.workspace.lifetime_defaults,
    ).toEqual(defaults);
    const at = clock();
    const defaulted = await create();
    expect(defaulted.lifetime).toMatchObject({ idle_timeout_seconds: 3600, on_end: 'delete' });
    const expires = Date.parse(String(defaulted.lifetime?.expires_at)) - 86_400_000;
    expect(expires).toBeGreaterThanOrEqual(at);
    expect(expires).toBeLessThan(clock());
    // A field the create names wins; null clears the default.
    const own = await create({ lifetime: { idle_timeout_seconds: null, on_end: 'stop' } });
    expect(own.lifetime).toMatchObject({ on_end: 'stop' });
    expect(own.lifetime).not.toHaveProperty('idle_timeout_seconds');
    const cleared = await t.call('PATCH', path, {
      token: team.owner.token,
      body: { lifetime_defaults: { idle_timeout_seconds: null, max_lifetime_seconds: null } },
    });
    expect(cleared.body.workspace).not.toHaveProperty('lifetime_defaults');
    // null is no value of the object itself: fields set to null clear it (the spec says so).
    const refused = await t.call('PATCH', path, {
      token: team.owner.token,
      body: { lifetime_defaults: null },
    });
    expect(refused.status).toBe(400);
    expect((await create()).lifetime).toBeUndefined();
  });

  test('PATCH extends the expiry, changes the end, and clears both (no lifetime left)', async () => {
    const computer = await create({
      lifetime: { expires_at: iso(clock() + DAY), idle_timeout_seconds: 600 },
    });
    const path = `${ws()}/computers/${computer.id}`;
    const extended = iso(clock() + 2 * DAY);
    const patched = await t.call('PATCH', path, {
      token: token(),
      body: { lifetime: { expires_at: extended, on_end: 'delete' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.computer.lifetime).toMatchObject({
      expires_at: extended,
      idle_timeout_seconds: 600,
      on_end: 'delete',
    });
    const bad = await t.call('PATCH', path, {
      token: token(),
      body: { lifetime: { expires_at: iso(clock() - 1) } },
    });
    expect(errorOf(bad).details.field_violations).toEqual([
      { field: 'lifetime.expires_at', description: expect.any(String) },
    ]);
    const keep = await t.call('PATCH', path, {
      token: token(),
      body: { lifetime: { idle_timeout_seconds: null, expires_at: null } },
    });
    expect(keep.body.computer).not.toHaveProperty('lifetime');
  });

  test('an idle computer is stopped by its timeout: one computer.stop with trigger idle_timeout, its events', async () => {
    const computer = await create({ lifetime: { idle_timeout_seconds: 60 } });
    expect(await t.app.lifetimes.checkOnce()).not.toContainEqual(
      expect.objectContaining({ target_id: computer.id }),
    );
    later(61_000);
    const started = (await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id);
    expect(started).toHaveLength(1);
    const operation = await settle(started[0]!.id);
    expect(operation).toMatchObject({
      type: 'computer.stop',
      state: 'succeeded',
      trigger: 'idle_timeout',
      created_by: team.editor.id,
    });
    expect((await read(computer.id)).state).toBe('stopped');
    expect(await triggered(computer.id)).toHaveLength(1);
    // Stopped, it is idle no more: a second check does nothing.
    expect((await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id)).toEqual([]);
    // The event log says what happened, as for a user's stop.
    const { rows } = await t.db.query<{ type: string; data: Record<string, unknown> }>(
      `SELECT type, data FROM workspace_events WHERE workspace_id = $1 AND data->>'id' IN ($2, $3) ORDER BY sequence`,
      [team.workspace.id, computer.id, operation.id],
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        type: 'operation.created',
        data: expect.objectContaining({ trigger: 'idle_timeout' }),
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        type: 'computer.updated',
        data: expect.objectContaining({ state: 'stopping' }),
      }),
    );
  });

  test('activity (a command) postpones the idle stop; touching activity writes no event', async () => {
    const computer = await create({ lifetime: { idle_timeout_seconds: 60 } });
    const path = `${ws()}/computers/${computer.id}`;
    later(50_000);
    const before = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM workspace_events WHERE workspace_id = $1`,
      [team.workspace.id],
    );
    const ran = await t.call('POST', `${path}/exec`, { token: token(), body: { argv: ['true'] } });
    expect(ran.status).toBe(200);
    const after = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM workspace_events WHERE workspace_id = $1`,
      [team.workspace.id],
    );
    expect(after.rows[0]?.n).toBe(before.rows[0]?.n);
    expect(Date.parse((await read(computer.id)).lifetime.last_active_at)).toBeGreaterThan(clock() - 10_000);
    later(50_000); // 100 s after the create, 50 s after the command
    expect((await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id)).toEqual([]);
    later(11_000);
    const started = (await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id);
    expect(started.map((o) => [o.type, o.trigger])).toEqual([['computer.stop', 'idle_timeout']]);
    await settle(started[0]!.id);
  });

  test('a file moved is activity: an upload postpones the idle stop', async () => {
    const computer = await create({ lifetime: { idle_timeout_seconds: 60 } });
    const path = `${ws()}/computers/${computer.id}`;
    later(50_000);
    const put = await t.call('PUT', `${path}/files?path=/home/svc/touch.txt`, {
      token: token(),
      raw: 'x',
      headers: { 'content-type': 'application/octet-stream' },
      key: false,
    });
    expect(put.status).toBe(200);
    later(50_000); // 100 s after the create, 50 s after the upload
    expect((await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id)).toEqual([]);
    later(11_000);
    const started = (await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id);
    expect(started.map((o) => [o.type, o.trigger])).toEqual([['computer.stop', 'idle_timeout']]);
    await settle(started[0]!.id);
  });

  test('a long command (run) is activity all the while it runs, not only when it is asked for', async () => {
    const computer = await create({ lifetime: { idle_timeout_seconds: 60 } });
    const path = `${ws()}/computers/${computer.id}`;
    const run = await t.call('POST', `${path}/run`, { token: token(), body: { argv: ['sleep', '2'] } });
    expect(run.status).toBe(202);
    // While it sleeps, 40 s pass on the lifetime clock: the worker's watch touches the computer again.
    await expect
      .poll(
        async () =>
          (await t.call('GET', `/v1/operations/${run.body.operations[0].id}`, { token: token() })).body
            .operation.state,
      )
      .toBe('running');
    later(40_000);
    const moved = clock() - 1000;
    expect((await settle(run.body.operations[0].id)).state).toBe('succeeded');
    expect(Date.parse((await read(computer.id)).lifetime.last_active_at)).toBeGreaterThanOrEqual(moved);
  });

  test('a computer is deleted by its expiry (on_end delete), once; the expiry is cleared', async () => {
    const computer = await create({ lifetime: { expires_at: iso(clock() + 120_000), on_end: 'delete' } });
    later(121_000);
    const started = (await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id);
    expect(started.map((o) => [o.type, o.trigger])).toEqual([['computer.delete', 'expiry']]);
    expect((await settle(started[0]!.id)).state).toBe('succeeded');
    const gone = await read(computer.id);
    expect(gone.state).toBe('deleted');
    expect(gone).not.toHaveProperty('lifetime');
    expect((await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id)).toEqual([]);
  });

  test('an expiry that finds its computer stopped (on_end stop) is cleared and starts nothing', async () => {
    const computer = await create({ lifetime: { expires_at: iso(clock() + 120_000) } });
    const path = `${ws()}/computers/${computer.id}`;
    await settle((await t.call('POST', `${path}/stop`, { token: token() })).body.operations[0].id);
    later(121_000);
    expect((await t.app.lifetimes.checkOnce()).filter((o) => o.target_id === computer.id)).toEqual([]);
    expect((await read(computer.id)).lifetime).toBeUndefined();
    expect(await triggered(computer.id)).toEqual([]);
  });

  test.each([
    ['running', 'running'],
    ['stopped', 'stopped'],
    ['missing', 'stopped'],
  ])('recover a failed computer whose simulated engine has it %s: it ends %s', async (engineHas, want) => {
    const computer = await create({}, { 'sim-fail': 'create' });
    const path = `${ws()}/computers/${computer.id}`;
    expect((await read(computer.id)).state).toBe('failed');
    await t.call('PATCH', path, { token: token(), body: { labels: { 'sim-recover': engineHas } } });
    const answer = await t.call('POST', `${path}/recover`, { token: token() });
    expect(answer.status).toBe(202);
    expect(answer.body.operations[0]).toMatchObject({ type: 'computer.recover', state: 'pending' });
    expect(answer.body.operations[0]).not.toHaveProperty('trigger');
    expect(answer.headers.get('location')).toBe(`/v1/operations/${answer.body.operations[0].id}`);
    expect(['recovering', want]).toContain((await read(computer.id)).state);
    expect((await settle(answer.body.operations[0].id)).state).toBe('succeeded');
    expect((await read(computer.id)).state).toBe(want);
  });

  test('recover from anything but failed: 409 invalid_state; while an operation runs: operation_in_progress; a viewer: 403', async () => {
    const computer = await create();
    const path = `${ws()}/computers/${computer.id}`;
    expect(errorOf(await t.call('POST', `${path}/recover`, { token: token() }))).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'running', allowed_from: ['failed'] },
    });
    const stop = await t.call('POST', `${path}/stop`, { token: token() });
    expect(errorOf(await t.call('POST', `${path}/recover`, { token: token() }))).toMatchObject({
      code: 'operation_in_progress',
      details: { operation_id: stop.body.operations[0].id },
    });
    await settle(stop.body.operations[0].id);
    expect(errorOf(await t.call('POST', `${path}/recover`, { token: team.viewer.token })).code).toBe(
      'permission_denied',
    );
  });
});
