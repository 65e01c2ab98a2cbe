import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { LISTEN_APPLICATION_NAME } from '../../src/platform/db/postgres.js';
import { errorOf, openTestApp, type TestApp, unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';

/**
 * Nothing waits forever: a request that cannot get a pooled connection, a lock or its statement's
 * answer in time is answered 503 `unavailable` with `Retry-After`, in the published error shape, and
 * the replica answers normally again once the load is gone.
 */
describePostgres('bounded waits', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await openTestApp(engine, {
      env: { SVC_RATE_LIMITS: 'principal=100000/60' },
      database: {
        poolSize: 2,
        bounds: { checkoutTimeoutMs: 200, lockTimeoutMs: 300, statementTimeoutMs: 2000 },
      },
    });
  });
  afterAll(() => t.close());

  test('every pooled connection carries the timeouts', async () => {
    const { rows } = await t.db.query<{ statement: string; lock: string; idle: string }>(
      `SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
              current_setting('idle_in_transaction_session_timeout') AS idle`,
    );
    expect(rows[0]).toEqual({ statement: '2s', lock: '300ms', idle: '10s' });
  });

  test('an exhausted pool answers 503 quickly, then normally once the load is gone', async () => {
    const { workspace, owner } = await t.team();
    // Both connections held on purpose, as a flood of slow transactions would hold them.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = [0, 1].map(() => t.db.transaction(() => gate));
    await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      const started = performance.now();
      const refused = await Promise.all(
        Array.from({ length: 5 }, () =>
          t.call('PATCH', `/v1/workspaces/${workspace.id}`, {
            token: owner.token,
            key: unique('k'),
            body: { display_name: 'busy' },
          }),
        ),
      );
      const waited = performance.now() - started;
      for (const answer of refused) {
        expect(answer.status).toBe(503);
        expect(errorOf(answer).code).toBe('unavailable');
        expect(answer.headers.get('retry-after')).toBe('1');
      }
      // Five requests at once, each bounded by the 200 ms checkout: well under a second together.
      expect(waited).toBeLessThan(1500);
    } finally {
      release();
      await Promise.all(holders);
    }
    const after = await t.call('PATCH', `/v1/workspaces/${workspace.id}`, {
      token: owner.token,
      key: unique('k'),
      body: { display_name: 'free' },
    });
    expect(after.status).toBe(200);
    expect(after.body.workspace.display_name).toBe('free');
  });

  test('a row locked elsewhere answers 503 after the lock timeout, and the key can be retried', async () => {
    const { workspace, owner } = await t.team();
    const outside = new pg.Client({ connectionString: await connectionString(t) });
    await outside.connect();
    const key = unique('k');
    try {
      await outside.query('BEGIN');
      await outside.query('SELECT id FROM workspaces WHERE id = $1 FOR UPDATE', [workspace.id]);
      const started = performance.now();
      const answer = await t.call('PATCH', `/v1/workspaces/${workspace.id}`, {
        token: owner.token,
        key,
        body: { display_name: 'locked' },
      });
      expect(answer.status).toBe(503);
      expect(errorOf(answer).code).toBe('unavailable');
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(performance.now() - started).toBeLessThan(1500);
    } finally {
      await outside.query('ROLLBACK').catch(() => {});
      await outside.end();
    }
    // Nothing was stored under the key: the same request goes through now.
    const retried = await t.call('PATCH', `/v1/workspaces/${workspace.id}`, {
      token: owner.token,
      key,
      body: { display_name: 'locked' },
    });
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  test('the worker runs operations while requests hold every connection of their pool', async () => {
    // Started by hand below, so the create's operation waits for it.
    await t.app.worker.stop();
    const { workspace, editor } = await t.team();
    const created = await t.call('POST', `/v1/workspaces/${workspace.id}/computers`, {
      token: editor.token,
      body: { name: unique('c'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = [0, 1].map(() => t.db.transaction(() => gate));
    try {
      // Creating a computer takes several steps, each a claim and writes on the worker's own pool.
      for (let step = 0; step < 10; step++) if (!(await t.app.worker.runOnce())) break;
    } finally {
      release();
      await Promise.all(holders);
    }
    const { rows } = await t.db.query<{ state: string }>('SELECT state FROM operations WHERE id = $1', [
      created.body.operations[0].id,
    ]);
    expect(rows[0]?.state).toBe('succeeded');
    await t.app.worker.start();
  });
});

describePostgres('a listening connection that stops answering', (engine) => {
  test('is given up after the barrier bound, and a new one listens', async () => {
    const db = await engine.open();
    const heard: string[] = [];
    await db.listen('svc_test_frozen', (payload) => heard.push(payload));
    const listener = async () =>
      (
        await db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
          [LISTEN_APPLICATION_NAME],
        )
      ).rows.map((row) => row.pid);
    const [frozen] = await listener();
    expect(frozen).toBeTypeOf('number');
    // The backend stops answering, as one behind a dead network path would: its socket stays open.
    process.kill(frozen as number, 'SIGSTOP');
    try {
      const started = performance.now();
      await expect(db.notificationBarrier()).rejects.toThrow();
      expect(performance.now() - started).toBeLessThan(3000);
      // Within a few seconds another connection listens, and a notification reaches the listener.
      const until = Date.now() + 10_000;
      while (!heard.includes('again') && Date.now() < until) {
        await db.query(`SELECT pg_notify('svc_test_frozen', 'again')`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(heard).toContain('again');
      // The frozen backend lingers until it runs again; beside it, a new one listens.
      expect((await listener()).filter((pid) => pid !== frozen)).toHaveLength(1);
      await expect(db.notificationBarrier()).resolves.toBeUndefined();
    } finally {
      process.kill(frozen as number, 'SIGCONT');
    }
  }, 30_000);
});

/** The test database's address, as the server's pool sees it. */
async function connectionString(t: TestApp): Promise<string> {
  const { rows } = await t.db.query<{ db: string }>('SELECT current_database() AS db');
  const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/${rows[0]?.db}`;
  return base.toString();
}
