// Webhooks end to end on one replica: endpoints through the API, the workspace's events fanned out and
// POSTed to receivers on 127.0.0.1 started here (SVC_WEBHOOKS_ALLOW_LOOPBACK=true), signed, retried,
// failing and disabled on an injected clock, rotated, redelivered, sampled; secrets never shown again
// nor logged.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Metrics } from '../../src/compose/metrics.js';
import { workspaceEventsAfter } from '../../src/computers/repositories/events.js';
import { createLoggerSync } from '../../src/platform/observe/logger.js';
import { errorOf, openTestApp, type Team, type TestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { startReceiver } from './receiver.js';

describeEngines('webhooks: delivery', (engine) => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** The webhooks' clock runs this far ahead of real time (the failing window, the overlap). */
  let offset = 0;
  const logged: string[] = [];
  /** What `rebind.test` resolves to now (the injected resolver; no DNS). */
  let rebindTo = '127.0.0.1';
  const metrics = new Metrics({ processMetrics: false });
  /** The value of one series of the metrics, e.g. `svc_webhook_attempts_total{outcome="succeeded"}` (0 when absent). */
  const sample = async (series: string): Promise<number> => {
    const line = (await metrics.render()).body.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  };
  beforeAll(async () => {
    receiver = await startReceiver();
    const log = (message: string, fields?: Record<string, unknown>) => {
      logged.push(`${message} ${JSON.stringify(fields)}`);
    };
    t = await openTestApp(engine, {
      env: {
        SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true',
        SVC_WEBHOOK_RETRY_SCHEDULE: '1,1',
        SVC_WEBHOOK_POLL_MS: '50',
        SVC_WEBHOOK_CONCURRENCY: '2',
        SVC_QUOTA_WEBHOOK_ENDPOINTS_PER_WORKSPACE: '3',
      },
      app: {
        webhooks: {
          now: () => Date.now() + offset,
          resolve: async (host) => {
            if (host !== 'rebind.test')
              throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
            return [{ address: rebindTo, family: 4 }];
          },
        },
        log,
        observe: { logger: createLoggerSync({ level: 'silent' }), metrics },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const base = (team: Team) => `/v1/workspaces/${team.workspace.id}/webhook-endpoints`;
  async function endpoint(team: Team, path: string, eventTypes: string[] = ['*']) {
    const created = await t.call('POST', base(team), {
      token: team.admin.token,
      body: { url: receiver.url(path), event_types: eventTypes, description: 'test receiver' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.webhook_endpoint as { id: string; secret: string; status: string };
  }
  /** One `workspace.updated` event: a new display name. */
  const touch = async (team: Team) => {
    const answer = await t.call('PATCH', `/v1/workspaces/${team.workspace.id}`, {
      token: team.owner.token,
      body: { display_name: unique('name') },
    });
    expect(answer.status).toBe(200);
  };
  const get = async (team: Team, id: string) =>
    (await t.call('GET', `${base(team)}/${id}`, { token: team.viewer.token })).body.webhook_endpoint;
  const deliveries = async (team: Team, id: string, query = '') =>
    (await t.call('GET', `${base(team)}/${id}/deliveries${query}`, { token: team.viewer.token })).body
      .webhook_deliveries;
  async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() > deadline) throw new Error(`not reached: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  test('create answers the secret once, a replay the same secret; GET and lists never', async () => {
    const team = await t.team();
    const key = unique('key');
    const body = { url: receiver.url('/create'), event_types: ['*'] };
    const first = await t.call('POST', base(team), { token: team.admin.token, body, key });
    expect(first.status).toBe(201);
    const secret = first.body.webhook_endpoint.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(first.headers.get('location')).toBe(`${base(team)}/${first.body.webhook_endpoint.id}`);
    const replay = await t.call('POST', base(team), { token: team.admin.token, body, key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.webhook_endpoint.secret).toBe(secret);
    const one = await t.call('GET', `${base(team)}/${first.body.webhook_endpoint.id}`, {
      token: team.viewer.token,
    });
    const list = await t.call('GET', base(team), { token: team.viewer.token });
    expect(one.body.webhook_endpoint).not.toHaveProperty('secret');
    expect(JSON.stringify([one.body, list.body])).not.toContain(secret);
    expect(list.body.webhook_endpoints).toHaveLength(1);
    expect(one.body.webhook_endpoint).toMatchObject({ status: 'enabled', event_types: ['*'] });
    expect(one.body.webhook_endpoint).not.toHaveProperty('disabled_reason');
    // Sealed at rest: the database does not hold it in clear.
    const { rows } = await t.db.query<{ sealed: string }>(
      `SELECT encode(secret_sealed, 'escape') AS sealed FROM webhook_endpoints WHERE id = $1`,
      [first.body.webhook_endpoint.id],
    );
    expect(rows[0]?.sealed).not.toContain(secret.slice(6));
  });

  test('a refused URL is 400 on url; the quota is 403 quota_exceeded', async () => {
    const team = await t.team();
    for (const url of ['https://10.0.0.1/x', 'http://169.254.169.254/latest', 'https://u:p@127.0.0.1/x']) {
      const answer = await t.call('POST', base(team), {
        token: team.admin.token,
        body: { url, event_types: ['*'] },
      });
      expect(answer.status, url).toBe(400);
      expect(errorOf(answer).details.field_violations[0].field).toBe('url');
    }
    for (let i = 0; i < 3; i++) await endpoint(team, `/quota-${i}`);
    const over = await t.call('POST', base(team), {
      token: team.admin.token,
      body: { url: receiver.url('/quota-x'), event_types: ['*'] },
    });
    expect(over.status).toBe(403);
    expect(errorOf(over)).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'webhook_endpoints_per_workspace', limit: 3 },
    });
  });

  test('an event arrives signed, verifies with standardwebhooks, and is the stream event exactly', async () => {
    const team = await t.team();
    const hook = await endpoint(team, '/signed');
    await touch(team);
    const [request] = await receiver.waitFor('/signed', 1);
    if (!request) throw new Error('no request');
    const verified = new Webhook(hook.secret).verify(request.body, request.headers as Record<string, string>);
    const events = await workspaceEventsAfter(t.db, team.workspace.id, 0, 100);
    const event = events.find((e) => e.type === 'workspace.updated');
    expect(verified).toEqual(JSON.parse(JSON.stringify(event?.data)));
    expect(request.headers['webhook-id']).toBe(event?.data.id);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['svc-webhook-test']).toBeUndefined();
    const [delivery] = await until(
      () => deliveries(team, hook.id),
      (list) => list[0]?.status === 'succeeded',
    );
    expect(delivery).toMatchObject({
      event_type: 'workspace.updated',
      attempt_count: 1,
      status: 'succeeded',
    });
    expect(delivery.attempts[0]).toMatchObject({ outcome: 'succeeded', status_code: 204 });
    expect(delivery).not.toHaveProperty('next_attempt_at');
  });

  test('event_types filter what is queued; events before creation are not sent', async () => {
    const team = await t.team();
    await touch(team); // before any endpoint
    const members = await endpoint(team, '/members', ['member.created']);
    const all = await endpoint(team, '/all');
    await touch(team);
    const user = await t.user();
    expect(
      (
        await t.call('POST', `/v1/workspaces/${team.workspace.id}/members`, {
          token: team.owner.token,
          body: { principal_id: user.id, role: 'viewer' },
        })
      ).status,
    ).toBe(201);
    const got = await receiver.waitFor('/all', 2);
    expect(got.map((r) => JSON.parse(r.body).type)).toEqual(['workspace.updated', 'member.created']);
    const only = await receiver.waitFor('/members', 1);
    expect(only.map((r) => JSON.parse(r.body).type)).toEqual(['member.created']);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received('/members')).toHaveLength(1);
    expect(receiver.received('/all')).toHaveLength(2);
    expect(await deliveries(team, members.id)).toHaveLength(1);
    expect(await deliveries(team, all.id)).toHaveLength(2);
  });

  test('a failing receiver is retried on the schedule, then failing; a success makes it enabled again', async () => {
    const team = await t.team();
    const httpErrors = await sample('svc_webhook_attempts_total{outcome="http_error"}');
    receiver.answer('/flaky', 503);
    const hook = await endpoint(team, '/flaky');
    await touch(team);
    // The first attempt and two retries (schedule 1 s, 1 s), then the delivery fails.
    const tries = await receiver.waitFor('/flaky', 3, 15_000);
    expect((tries[1]?.at ?? 0) - (tries[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
    expect(tries.map((r) => r.headers['webhook-id'])).toEqual(Array(3).fill(tries[0]?.headers['webhook-id']));
    const failing = await until(
      () => get(team, hook.id),
      (e) => e.status === 'failing',
    );
    expect(failing.failing_since).toBeDefined();
    const [delivery] = await deliveries(team, hook.id, '?status=failed');
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 3 });
    expect(delivery.attempts.map((a: { outcome: string }) => a.outcome)).toEqual([
      'http_error',
      'http_error',
      'http_error',
    ]);
    expect(delivery.attempts[0].status_code).toBe(503);
    // Every attempt is counted by outcome, and timed.
    expect((await sample('svc_webhook_attempts_total{outcome="http_error"}')) - httpErrors).toBe(3);
    expect(
      await sample('svc_webhook_attempt_duration_seconds_count{outcome="http_error"}'),
    ).toBeGreaterThanOrEqual(3);
    expect((await metrics.render()).body).toMatch(/^svc_webhook_attempts_in_flight \d+$/m);
    // Redeliver: pending again, a fresh round; the receiver recovers.
    receiver.answer('/flaky', 200);
    const again = await t.call('POST', `${base(team)}/${hook.id}/deliveries/${delivery.id}/redeliver`, {
      token: team.admin.token,
    });
    expect(again.status).toBe(200);
    expect(again.body.webhook_delivery.status).toBe('pending');
    const busy = await t.call('POST', `${base(team)}/${hook.id}/deliveries/${delivery.id}/redeliver`, {
      token: team.admin.token,
    });
    if (busy.status !== 200) expect(errorOf(busy).code).toBe('invalid_state');
    await receiver.waitFor('/flaky', 4);
    const enabled = await until(
      () => get(team, hook.id),
      (e) => e.status === 'enabled',
    );
    expect(enabled).not.toHaveProperty('failing_since');
  });

  test('a retry does not hold later events back (receivers order by sequence)', async () => {
    const team = await t.team();
    receiver.answer('/order', (before) => (before === 0 ? 503 : 204));
    await endpoint(team, '/order');
    await touch(team);
    await receiver.waitFor('/order', 1);
    await touch(team);
    const got = await receiver.waitFor('/order', 3, 10_000);
    const sequences = got.map((r) => JSON.parse(r.body).sequence as number);
    // The first event failed; the second went out before the first's retry, 1 s later.
    expect(sequences[1]).toBe((sequences[0] ?? 0) + 1);
    expect(sequences[2]).toBe(sequences[0]);
  });

  test('an endpoint failing for 3 days is disabled (failing); events while disabled are not queued', async () => {
    const team = await t.team();
    receiver.answer('/dead', 500);
    const hook = await endpoint(team, '/dead');
    await touch(team);
    await until(
      () => get(team, hook.id),
      (e) => e.status === 'failing',
      15_000,
    );
    offset += 3 * 24 * 3600_000 + 1000;
    const disabled = await until(
      () => get(team, hook.id),
      (e) => e.status === 'disabled',
    );
    expect(disabled.disabled_reason).toBe('failing');
    expect(disabled).not.toHaveProperty('failing_since');
    const before = receiver.received('/dead').length;
    await touch(team);
    await new Promise((r) => setTimeout(r, 400));
    expect(await deliveries(team, hook.id)).toHaveLength(1);
    receiver.answer('/dead', 204);
    const enabled = await t.call('POST', `${base(team)}/${hook.id}/enable`, { token: team.admin.token });
    expect(enabled.body.webhook_endpoint).toMatchObject({ status: 'enabled' });
    await touch(team);
    await receiver.waitFor('/dead', before + 1);
    expect(await deliveries(team, hook.id)).toHaveLength(2);
    // Back to real time: receivers check a delivery's timestamp against their own clock.
    offset = 0;
  });

  test('a host that resolves to a private address at delivery: refused_address, retried per schedule', async () => {
    const team = await t.team();
    rebindTo = '127.0.0.1';
    const port = new URL(receiver.url('/')).port;
    const created = await t.call('POST', base(team), {
      token: team.admin.token,
      body: { url: `http://rebind.test:${port}/rebind`, event_types: ['*'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.webhook_endpoint.id as string;
    rebindTo = '10.0.0.7';
    await touch(team);
    const [pending] = await until(
      () => deliveries(team, id),
      (list) => list[0]?.attempt_count >= 1,
    );
    expect(pending.attempts[0]).toMatchObject({ outcome: 'refused_address' });
    expect(pending.attempts[0].error).toMatch(/10\.0\.0\.7, a private address/);
    expect(pending.status).toBe('pending');
    expect(pending.next_attempt_at).toBeDefined();
    const [failed] = await until(
      () => deliveries(team, id),
      (list) => list[0]?.status === 'failed',
      15_000,
    );
    expect(failed.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(
      Array(3).fill('refused_address'),
    );
    expect(receiver.received('/rebind')).toHaveLength(0);
    // The same check on update: a URL whose host now resolves to a private address is refused.
    const update = await t.call('PATCH', `${base(team)}/${id}`, {
      token: team.admin.token,
      body: { url: `http://rebind.test:${port}/other` },
    });
    expect(update.status).toBe(400);
    expect(errorOf(update).details.field_violations[0].field).toBe('url');
  });

  test('disable by request; then redelivery is refused', async () => {
    const team = await t.team();
    const hook = await endpoint(team, '/disabled');
    await touch(team);
    await receiver.waitFor('/disabled', 1);
    const [delivery] = await until(
      () => deliveries(team, hook.id),
      (list) => list[0]?.status === 'succeeded',
    );
    const off = await t.call('POST', `${base(team)}/${hook.id}/disable`, { token: team.admin.token });
    expect(off.body.webhook_endpoint).toMatchObject({ status: 'disabled', disabled_reason: 'requested' });
    const refused = await t.call('POST', `${base(team)}/${hook.id}/deliveries/${delivery.id}/redeliver`, {
      token: team.admin.token,
    });
    expect(refused.status).toBe(409);
    expect(errorOf(refused).code).toBe('invalid_state');
  });

  test('rotation: both signatures during the overlap, only the new one after', async () => {
    const team = await t.team();
    const hook = await endpoint(team, '/rotate');
    const rotated = await t.call('POST', `${base(team)}/${hook.id}/rotate`, {
      token: team.admin.token,
      body: { overlap_seconds: 60 },
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.webhook_endpoint.secret as string;
    expect(fresh).not.toBe(hook.secret);
    expect(rotated.body.webhook_endpoint.secret_expires_at).toBeDefined();
    expect((await get(team, hook.id)).secret_expires_at).toBeDefined();
    await touch(team);
    const [during] = await receiver.waitFor('/rotate', 1);
    if (!during) throw new Error('no request');
    expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    for (const secret of [fresh, hook.secret])
      expect(() =>
        new Webhook(secret).verify(during.body, during.headers as Record<string, string>),
      ).not.toThrow();
    offset += 61_000;
    await touch(team);
    const [, after] = await receiver.waitFor('/rotate', 2);
    if (!after) throw new Error('no request');
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    // Signed at the webhooks' clock (a minute ahead): compare the signature itself.
    const signed = new Webhook(fresh).sign(
      after.headers['webhook-id'] as string,
      new Date(Number(after.headers['webhook-timestamp']) * 1000),
      after.body,
    );
    expect(after.headers['webhook-signature']).toBe(signed);
    const old = new Webhook(hook.secret).sign(
      after.headers['webhook-id'] as string,
      new Date(Number(after.headers['webhook-timestamp']) * 1000),
      after.body,
    );
    expect(after.headers['webhook-signature']).not.toContain(old.slice(3));
    // A rotation with no overlap ends the previous secret at once.
    const now = await t.call('POST', `${base(team)}/${hook.id}/rotate`, {
      token: team.admin.token,
      body: { overlap_seconds: 0 },
    });
    expect(now.body.webhook_endpoint).not.toHaveProperty('secret_expires_at');
    offset = 0;
  });

  test('a test event: the chosen type, svc-webhook-test: true, whatever the subscription', async () => {
    const team = await t.team();
    const hook = await endpoint(team, '/sample', ['member.deleted']);
    const queued = await t.call('POST', `${base(team)}/${hook.id}/test`, {
      token: team.admin.token,
      body: { event_type: 'computer.created' },
    });
    expect(queued.status).toBe(200);
    expect(queued.body.webhook_delivery).toMatchObject({
      test: true,
      event_type: 'computer.created',
      status: 'pending',
    });
    const [request] = await receiver.waitFor('/sample', 1);
    expect(request?.headers['svc-webhook-test']).toBe('true');
    const body = new Webhook(hook.secret).verify(
      request?.body ?? '',
      request?.headers as Record<string, string>,
    ) as {
      type: string;
      workspace_id: string;
      computer: { workspace_id: string };
    };
    expect(body).toMatchObject({ type: 'computer.created', workspace_id: team.workspace.id });
    expect(body.computer.workspace_id).toBe(team.workspace.id);
    // A disabled endpoint gets sample events too (its other deliveries wait).
    await t.call('POST', `${base(team)}/${hook.id}/disable`, { token: team.admin.token });
    const toDisabled = await t.call('POST', `${base(team)}/${hook.id}/test`, {
      token: team.admin.token,
      body: { event_type: 'key.deleted' },
    });
    expect(toDisabled.status).toBe(200);
    const [, second] = await receiver.waitFor('/sample', 2);
    expect(JSON.parse(second?.body ?? '{}').type).toBe('key.deleted');
    const unknown = await t.call('POST', `${base(team)}/${hook.id}/test`, {
      token: team.admin.token,
      body: { event_type: 'nothing.here' },
    });
    expect(unknown.status).toBe(400);
  });

  test('fairness: an endpoint that hangs does not delay another endpoint', async () => {
    const team = await t.team();
    receiver.answer('/hang', 'hang');
    await endpoint(team, '/hang');
    await touch(team);
    await receiver.waitFor('/hang', 1);
    await touch(team);
    await touch(team);
    // The hung endpoint holds one slot (one attempt per endpoint); the other is served at once.
    const other = await t.team();
    await endpoint(other, '/other');
    const started = Date.now();
    await touch(other);
    await receiver.waitFor('/other', 1, 5000);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(receiver.received('/hang')).toHaveLength(1);
  });

  test('permissions: viewers read, admins change; secrets are in no log line', async () => {
    const team = await t.team();
    const hook = await endpoint(team, '/perm');
    const denied = await t.call('POST', `${base(team)}/${hook.id}/rotate`, { token: team.editor.token });
    expect(denied.status).toBe(403);
    const hidden = await t.call('GET', `${base(team)}/${hook.id}`, { token: team.outsider.token });
    expect(hidden.status).toBe(404);
    const patched = await t.call('PATCH', `${base(team)}/${hook.id}`, {
      token: team.admin.token,
      body: { description: '', event_types: ['computer.created'] },
    });
    expect(patched.body.webhook_endpoint).not.toHaveProperty('description');
    expect(patched.body.webhook_endpoint.event_types).toEqual(['computer.created']);
    const deleted = await t.call('DELETE', `${base(team)}/${hook.id}`, { token: team.admin.token });
    expect(deleted.status).toBe(204);
    expect(logged.join('\n')).not.toContain(hook.secret);
    expect(logged.join('\n')).not.toContain('whsec_');
  });
});
