import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import type { TestApp } from '../support/app.js';
import { errorOf, ORIGIN, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { addKey } from '../support/fixtures.js';

const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;

describeEngines('app: cross-cutting behaviour', (engine) => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_RATE_LIMITS: 'principal=50/60' } });
    token = (await t.user()).token;
  });
  afterAll(() => t.close());

  test.each([
    ['unknown route', 'GET', '/v1/nope', {}, 404, 'not_found'],
    ['wrong method', 'PUT', '/v1/me', {}, 405, 'method_not_allowed'],
    ['malformed JSON', 'POST', '/v1/workspaces', { raw: '{"name":' }, 400, 'invalid_request'],
    [
      'wrong content type',
      'POST',
      '/v1/workspaces',
      { raw: 'x', headers: { 'content-type': 'text/plain' } },
      415,
      'unsupported_media_type',
    ],
    [
      'body over 1 MiB',
      'POST',
      '/v1/workspaces',
      { raw: ' '.repeat(1024 * 1024 + 1) },
      413,
      'payload_too_large',
    ],
    [
      'create without Idempotency-Key',
      'POST',
      '/v1/workspaces',
      { body: { name: 'x' }, key: false as const },
      400,
      'idempotency_key_required',
    ],
    ['no token', 'GET', '/v1/me', { noToken: true }, 401, 'unauthenticated'],
  ])(
    '%s: %i %s in the envelope, with Request-Id and RateLimit headers',
    async (_, method, path, options, status, code) => {
      const { noToken, ...call } = options as Record<string, unknown> & { noToken?: boolean };
      const answer = await t.call(method, path, { token: noToken ? undefined : token, ...call });
      expect(answer.status).toBe(status);
      expect(errorOf(answer).code).toBe(code);
      expect(answer.headers.get('request-id')).toMatch(ID);
      expect(answer.headers.get('ratelimit-policy')).toBe('"principal";q=50;w=60');
      expect(answer.headers.get('ratelimit')).toMatch(/^"principal";r=\d+;t=\d+$/);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      if (status === 405) expect(answer.headers.get('allow')).toContain('GET');
      if (status === 401) expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(JSON.stringify(answer.body)).not.toMatch(/SELECT|at .*\.ts|stack/i);
    },
  );

  test('a CORS preflight answers 204 with the allowed methods', async () => {
    const answer = await t.app.fetch(new Request(`${ORIGIN}/v1/workspaces`, { method: 'OPTIONS' }));
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-methods')).toContain('POST');
    expect(answer.headers.get('request-id')).toMatch(ID);
  });

  test('GET /health needs no token and reports the spec version', async () => {
    const answer = await t.call('GET', '/v1/health');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'ok', version: expect.any(String) });
  });

  test('mutations count against the workspace policy; RateLimit names the policy closest to exhaustion', async () => {
    const owner = await t.user();
    const created = await t.call('POST', '/v1/workspaces', {
      token: owner.token,
      body: { name: unique('rl') },
    });
    const patched = await t.call('PATCH', `/v1/workspaces/${created.body.workspace.id}`, {
      token: owner.token,
      body: { display_name: 'Rate limited' },
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('ratelimit-policy')).toBe(
      '"principal";q=50;w=60, "workspace-mutations";q=120;w=60',
    );
    expect(patched.headers.get('ratelimit')).toMatch(/^"principal";r=4[0-9];t=\d+$/);
  });

  test('over the principal limit: 429 rate_limited with Retry-After and details', async () => {
    const { token: busy } = await t.user();
    let last = await t.call('GET', '/v1/me', { token: busy });
    for (let i = 0; i < 50 && last.status !== 429; i++) last = await t.call('GET', '/v1/me', { token: busy });
    expect(last.status).toBe(429);
    expect(errorOf(last)).toMatchObject({ code: 'rate_limited', details: { policy: 'principal' } });
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  describe('idempotency', () => {
    test('a replay answers the stored status and body with Idempotent-Replayed; another body is 422', async () => {
      const { token: caller } = await t.user();
      const key = newId();
      const body = { name: unique('idem') };
      const first = await t.call('POST', '/v1/workspaces', { token: caller, body, key });
      const second = await t.call('POST', '/v1/workspaces', { token: caller, body, key });
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      expect(second.headers.get('location')).toBe(first.headers.get('location'));
      const reused = await t.call('POST', '/v1/workspaces', {
        token: caller,
        body: { name: unique('other') },
        key,
      });
      expect(reused.status).toBe(422);
      expect(errorOf(reused).code).toBe('idempotency_key_reused');
    });

    test('keys are per principal: another caller with the same key creates its own', async () => {
      const key = newId();
      const a = await t.call('POST', '/v1/workspaces', {
        token: (await t.user()).token,
        body: { name: unique('pa') },
        key,
      });
      const b = await t.call('POST', '/v1/workspaces', {
        token: (await t.user()).token,
        body: { name: unique('pb') },
        key,
      });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
    });

    test('concurrent requests with one key have exactly one effect', async () => {
      const { id, token: caller } = await t.user();
      const key = newId();
      const body = { name: unique('race') };
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => t.call('POST', '/v1/workspaces', { token: caller, body, key })),
      );
      for (const answer of answers) expect([201, 409]).toContain(answer.status);
      for (const answer of answers.filter((a) => a.status === 409))
        expect(errorOf(answer).code).toBe('idempotency_key_in_use');
      const { rows } = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM workspaces WHERE created_by = $1',
        [id],
      );
      expect(rows[0]?.n).toBe(1);
    });

    test('a stored 409 replays with the new request id', async () => {
      const { token: caller } = await t.user();
      const name = unique('dup');
      await t.call('POST', '/v1/workspaces', { token: caller, body: { name } });
      const key = newId();
      const first = await t.call('POST', '/v1/workspaces', { token: caller, body: { name }, key });
      const again = await t.call('POST', '/v1/workspaces', { token: caller, body: { name }, key });
      expect(errorOf(first).code).toBe('already_exists');
      expect(errorOf(again).code).toBe('already_exists');
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });
  });

  describe('POST /auth/token', () => {
    test('a key-file assertion gives a token for /me; the same assertion again is 401 (jti replay)', async () => {
      const { workspaceId } = await (async () => {
        const team = await t.team();
        return { workspaceId: team.workspace.id, owner: team.owner };
      })();
      const { rows } = await t.db.query<{ principal_id: string }>(
        `SELECT principal_id FROM members WHERE workspace_id = $1 AND role = 'owner'`,
        [workspaceId],
      );
      const file = await addKey(t.db, rows[0]!.principal_id);
      const assertion = await signAssertion(file, { tokenUrl: t.app.deps.config.tokenUrl });
      const exchanged = await t.call('POST', '/v1/auth/token', { token: assertion });
      expect(exchanged.status).toBe(200);
      expect(exchanged.body.token).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
      const me = await t.call('GET', '/v1/me', { token: exchanged.body.token.access_token });
      expect(me.body.identity.workspaces).toEqual([
        expect.objectContaining({ id: workspaceId, role: 'owner' }),
      ]);
      const replay = await t.call('POST', '/v1/auth/token', { token: assertion });
      expect(errorOf(replay).code).toBe('unauthenticated');
    });

    test('with an Idempotency-Key, a retry of the same assertion replays the same token', async () => {
      const { id } = await t.user();
      const file = await addKey(t.db, id);
      const assertion = await signAssertion(file, { tokenUrl: t.app.deps.config.tokenUrl });
      const key = newId();
      const first = await t.call('POST', '/v1/auth/token', { token: assertion, key });
      const again = await t.call('POST', '/v1/auth/token', { token: assertion, key });
      expect(first.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
    });

    test('an unknown grant_type is 400 invalid_request; an access token is not an assertion', async () => {
      const unknown = await t.call('POST', '/v1/auth/token', { token, body: { grant_type: 'password' } });
      expect(unknown.status).toBe(400);
      expect(errorOf(unknown).code).toBe('invalid_request');
      const swapped = await t.call('POST', '/v1/auth/token', { token });
      expect(errorOf(swapped).code).toBe('unauthenticated');
    });
  });
});

describeEngines('app: health when the database is unreachable', (engine) => {
  let t: TestApp;
  let broken = false;
  beforeAll(async () => {
    const wrap = (db: Database): Database => ({
      ...db,
      query: (sql, params) =>
        broken
          ? Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' }))
          : db.query(sql, params),
    });
    t = await openTestApp(engine, { wrapDb: wrap });
  });
  afterAll(async () => {
    broken = false;
    await t.close();
  });

  test('GET /health is 503 unavailable with Retry-After, and 200 again once it answers', async () => {
    broken = true;
    const down = await t.call('GET', '/v1/health');
    expect(down.status).toBe(503);
    expect(errorOf(down).code).toBe('unavailable');
    expect(down.headers.get('retry-after')).toBe('5');
    broken = false;
    expect((await t.call('GET', '/v1/health')).status).toBe(200);
  });
});
