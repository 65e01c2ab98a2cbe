// The principal cache across replicas: two server instances (each its own pool and listening
// connection) on one throwaway PostgreSQL database. A change made through one replica — a revoked
// key, a removed member — is refused by the other within a second: normally through NOTIFY within
// milliseconds, and by the cache's TTL alone when notifications are lost.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type App, createApp } from '../../src/compose/app.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';
import { callReplica as call, replicaConfig as config } from '../support/replicas.js';

/** Calls until the answer's status is `status`; resolves to the milliseconds it took (or fails at 3 s). */
async function until(status: number, ask: () => Promise<{ status: number }>): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((await ask()).status === status) return performance.now() - started;
    if (performance.now() - started > 3000) throw new Error(`still not ${status} after 3 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describePostgres('principal cache on two replicas', (engine) => {
  let one: App;
  let two: App;
  let deaf: App;
  let owner: { id: string; token: string };
  let workspace: string;
  const dbs: Database[] = [];
  beforeAll(async () => {
    const first = await engine.open();
    const second = await engine.replica(first);
    const third = await engine.replica(first);
    dbs.push(first, second, third);
    one = await createApp({ config, db: first, responseValidation: 'throw' });
    two = await createApp({ config, db: second, responseValidation: 'throw' });
    // A replica that never hears a notification: only the TTL ends what it remembers.
    deaf = await createApp({
      config,
      db: { ...third, listen: async () => async () => {} },
      responseValidation: 'throw',
    });
    const ownerId = newId();
    await first.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [
      ownerId,
      unique('o'),
    ]);
    owner = { id: ownerId, token: (await one.deps.tokens.issue(ownerId)).access_token };
    const created = await call(one, 'POST', '/v1/workspaces', owner.token, { name: unique('ws') });
    expect(created.status).toBe(201);
    workspace = created.body.workspace.id;
  });
  afterAll(async () => {
    for (const app of [one, two, deaf]) await app?.close();
  });

  async function viewer() {
    const id = newId();
    await dbs[0]?.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [id, unique('v')]);
    const added = await call(one, 'POST', `/v1/workspaces/${workspace}/members`, owner.token, {
      principal_id: id,
      role: 'viewer',
    });
    expect(added.status).toBe(201);
    return {
      id,
      member: added.body.member.id as string,
      token: (await one.deps.tokens.issue(id)).access_token,
    };
  }

  test('a member removed on one replica loses access on the other within a second', async () => {
    const v = await viewer();
    const list = `/v1/workspaces/${workspace}/computers`;
    expect((await call(two, 'GET', list, v.token)).status).toBe(200); // cached on replica two now
    expect((await call(two, 'GET', list, v.token)).status).toBe(200);
    expect(
      (await call(one, 'DELETE', `/v1/workspaces/${workspace}/members/${v.member}`, owner.token)).status,
    ).toBe(204);
    // The replica that made the change refuses from the very next request.
    expect((await call(one, 'GET', list, v.token)).status).toBe(404);
    const elapsed = await until(404, () => call(two, 'GET', list, v.token));
    expect(elapsed).toBeLessThan(1000);
    const me = await call(two, 'GET', '/v1/me', v.token);
    expect(me.body.identity.workspaces).toEqual([]);
  });

  test('a key revoked on one replica is refused by the other within a second', async () => {
    const account = await call(one, 'POST', `/v1/workspaces/${workspace}/service-accounts`, owner.token, {
      name: unique('bot'),
      role: 'viewer',
    });
    expect(account.status).toBe(201);
    const accountId = account.body.service_account.id as string;
    const key = await call(
      one,
      'POST',
      `/v1/workspaces/${workspace}/service-accounts/${accountId}/keys`,
      owner.token,
      {
        algorithm: 'ES256',
      },
    );
    expect(key.status).toBe(201);
    const keyId = key.body.key.id as string;
    const token = (await one.deps.tokens.issue(accountId, { keyId })).access_token;
    expect((await call(two, 'GET', '/v1/me', token)).status).toBe(200);
    expect((await call(deaf, 'GET', '/v1/me', token)).status).toBe(200);
    const revoked = await call(
      one,
      'DELETE',
      `/v1/workspaces/${workspace}/service-accounts/${accountId}/keys/${keyId}`,
      owner.token,
    );
    expect(revoked.status).toBe(204);
    expect((await call(one, 'GET', '/v1/me', token)).status).toBe(401);
    const [heard, aged] = await Promise.all([
      until(401, () => call(two, 'GET', '/v1/me', token)),
      until(401, () => call(deaf, 'GET', '/v1/me', token)),
    ]);
    expect(heard).toBeLessThan(1000);
    // Without notifications the entry lives out its TTL (≤ 1 s) — then the database says no.
    expect(aged).toBeLessThan(1100);
    const refused = await call(two, 'GET', '/v1/me', token);
    expect(refused.body.error.code).toBe('unauthenticated');
  });

  test('a notification drops only what it names: other principals stay cached', async () => {
    const a = await viewer();
    const b = await viewer();
    await call(two, 'GET', '/v1/me', a.token);
    await call(two, 'GET', '/v1/me', b.token);
    // b's membership changes (role), through replica one; replica two must still answer a from memory.
    const changed = await call(one, 'PATCH', `/v1/workspaces/${workspace}/members/${b.member}`, owner.token, {
      role: 'editor',
    });
    expect(changed.status).toBe(200);
    await until(200, async () => {
      const me = await call(two, 'GET', '/v1/me', b.token);
      return { status: me.body.identity.workspaces[0]?.role === 'editor' ? 200 : 0 };
    });
    const queries: string[] = [];
    const spy = two.db.query;
    two.db.query = (sql, params) => {
      queries.push(sql);
      return spy(sql, params);
    };
    try {
      expect((await call(two, 'GET', '/v1/me', a.token)).status).toBe(200);
    } finally {
      two.db.query = spy;
    }
    expect(queries).toEqual([]);
  });
});
