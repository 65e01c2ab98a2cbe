// How many database round trips an authenticated read costs (issue: fast reads), and what a create
// runs and in which order. The app's database is wrapped in a counting decorator (statements inside a
// transaction too); AsyncLocalStorage attributes each statement to the request that ran it, so the
// operation worker's own queries in the background are not counted. Rate limits are off: on PostgreSQL
// the shared rate-limit counter is one more statement per request, by design.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database, FinalStatement, Queryable } from '../../src/platform/db/database.js';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp, unique } from '../support/app.js';
import { describeEngines, describePostgres } from '../support/databases.js';

/**
 * Counts the statements (and transactions) run inside `measure`, per call, and apart from them the
 * notification barriers it waited for (on PostgreSQL a `SELECT 1` on the listening connection that
 * every request arriving meanwhile shares; on PGlite nothing).
 */
function countingDatabase() {
  const scope = new AsyncLocalStorage<{ statements: string[]; barriers: number }>();
  /** `finals`: in a transaction, where its final statements wait for the COMMIT, to be counted then. */
  const counted = <Q extends Queryable>(db: Q, finals?: string[]): Q => ({
    ...db,
    query: (sql: string, params?: unknown[]) => {
      scope.getStore()?.statements.push(sql);
      return db.query(sql, params);
    },
    commitWith: (statement: FinalStatement) => {
      if (finals) finals.push(`${statement.sql} (with the COMMIT)`);
      else scope.getStore()?.statements.push(statement.sql);
      return db.commitWith(statement);
    },
  });
  const wrap = (db: Database): Database => ({
    ...counted(db),
    transaction: (fn) => {
      scope.getStore()?.statements.push('BEGIN … COMMIT');
      return db.transaction(async (tx) => {
        const finals: string[] = [];
        const result = await fn(counted(tx, finals));
        scope.getStore()?.statements.push(...finals);
        return result;
      });
    },
    notificationBarrier: () => {
      const store = scope.getStore();
      if (store) store.barriers++;
      return db.notificationBarrier();
    },
  });
  const measure = async <T>(
    fn: () => Promise<T>,
  ): Promise<{ result: T; statements: string[]; barriers: number }> => {
    const store = { statements: [] as string[], barriers: 0 };
    const result = await scope.run(store, fn);
    return { result, ...store };
  };
  return { wrap, measure };
}

describeEngines('round trips of an authenticated read', (engine) => {
  const counting = countingDatabase();
  let t: TestApp;
  let team: Team;
  let computer: string;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_RATE_LIMITS: 'off' }, wrapDb: counting.wrap });
    team = await t.team();
    const created = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
      token: team.editor.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    computer = created.body.computer.id;
    // Settled, so the worker's steps no longer change the workspace's computers (and drop their cache).
    const settled = await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=10`, {
      token: team.editor.token,
    });
    expect(settled.body.operation.state).toBe('succeeded');
  });
  afterAll(() => t.close());

  /** `statements`: what the first warm read costs; the row is cached by workspace id, whatever names it. */
  const reads = () => [
    { name: 'GET /me', path: '/v1/me', statements: 0 },
    {
      name: 'GET a computer',
      path: `/v1/workspaces/${team.workspace.id}/computers/${computer}`,
      statements: 1,
    },
    {
      name: 'GET a computer by workspace name (cached by the one before)',
      path: `/v1/workspaces/${team.workspace.name}/computers/${computer}`,
      statements: 0,
    },
    { name: 'list computers', path: `/v1/workspaces/${team.workspace.id}/computers`, statements: 1 },
  ];

  test('a cold read costs one round trip more than a warm one: the principal and its memberships', async () => {
    const { result, statements } = await counting.measure(() =>
      t.call('GET', '/v1/me', { token: team.viewer.token }),
    );
    expect(result.status).toBe(200);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('FROM principals p');
  });

  // `t.call` itself waits for one barrier before each request (so tests may write straight in SQL).
  const CALL = 1;

  test('warm: GET /me costs none; a computer and a list page cost one, then none while cached', async () => {
    await t.call('GET', '/v1/me', { token: team.viewer.token }); // warms the principal cache
    for (const read of reads()) {
      const first = await counting.measure(() => t.call('GET', read.path, { token: team.viewer.token }));
      expect(first.result.status, read.name).toBe(200);
      expect(first.statements, `${read.name}: ${first.statements.join('\n')}`).toHaveLength(read.statements);
      expect(first.barriers - CALL, read.name).toBe(read.name === 'GET /me' ? 0 : 1 - read.statements);
      // Again: the row or page is in this replica's cache; the read waits for the notification
      // barrier (every change committed before it has been heard) instead of running a statement.
      const again = await counting.measure(() => t.call('GET', read.path, { token: team.viewer.token }));
      expect(again.result.body, read.name).toEqual(first.result.body);
      expect(again.statements, `${read.name}: ${again.statements.join('\n')}`).toHaveLength(0);
      expect(again.barriers - CALL, read.name).toBe(read.name === 'GET /me' ? 0 : 1);
    }
  });

  test('a change to a computer, by any writer, is seen by the very next read', async () => {
    const path = `/v1/workspaces/${team.workspace.id}/computers/${computer}`;
    const list = `/v1/workspaces/${team.workspace.id}/computers`;
    await t.call('GET', path, { token: team.viewer.token });
    await t.call('GET', list, { token: team.viewer.token });
    // Through the API: the answer leaves after this replica has heard the change.
    const name = unique('renamed');
    const renamed = await t.call('PATCH', path, { token: team.editor.token, body: { name } });
    expect(renamed.status).toBe(200);
    expect((await t.call('GET', path, { token: team.viewer.token })).body.computer.name).toBe(name);
    const page = await t.call('GET', list, { token: team.viewer.token });
    expect(page.body.computers.map((c: { name: string }) => c.name)).toContain(name);
    // Straight in SQL, as the worker or another replica would write: the trigger announces it.
    await t.db.query(`UPDATE computers SET labels = '{"moved":"by-sql"}' WHERE id = $1`, [computer]);
    const read = await counting.measure(() => t.call('GET', path, { token: team.viewer.token }));
    expect(read.result.body.computer.labels).toEqual({ moved: 'by-sql' });
    expect(read.statements).toHaveLength(1);
  });

  test('a refusal costs no more: an outsider and an unknown workspace are 404 from the cache', async () => {
    await t.call('GET', '/v1/me', { token: team.outsider.token });
    for (const path of [
      `/v1/workspaces/${team.workspace.id}/computers/${computer}`,
      `/v1/workspaces/${unique('nowhere')}/computers`,
    ]) {
      const { result, statements } = await counting.measure(() =>
        t.call('GET', path, { token: team.outsider.token }),
      );
      expect(result.status).toBe(404);
      expect(result.body.error.code).toBe('not_found');
      expect(statements).toHaveLength(0);
    }
  });

  test('other lists: one round trip once warm', async () => {
    await t.call('GET', '/v1/me', { token: team.viewer.token });
    const { result, statements } = await counting.measure(() =>
      t.call('GET', `/v1/workspaces/${team.workspace.id}/members`, { token: team.viewer.token }),
    );
    expect(result.status).toBe(200);
    expect(statements).toHaveLength(1);
  });
});

describeEngines('round trips of a create and of a key list', (engine) => {
  const counting = countingDatabase();
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_RATE_LIMITS: 'off' }, wrapDb: counting.wrap });
    team = await t.team();
  });
  afterAll(() => t.close());

  test('a create: four statements in its transaction, the workspace locked only by the last, sent with the COMMIT', async () => {
    await t.call('GET', '/v1/me', { token: team.editor.token }); // warms the principal cache
    const { result, statements } = await counting.measure(() =>
      t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
        token: team.editor.token,
        body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
      }),
    );
    expect(result.status).toBe(202);
    const trace = statements.join('\n');
    // The Idempotency-Key's claim, then the transaction: membership; the computer with its operation
    // (and the worker's wake-up), checked against the catalogue, in one statement; the key's record;
    // the quota's counter (`commitWith`, sent with the COMMIT).
    expect(statements, trace).toHaveLength(6);
    expect(statements[3], trace).toMatch(
      /INSERT INTO computers[\s\S]*FROM sizes[\s\S]*INSERT INTO operations[\s\S]*pg_notify/,
    );
    expect(statements[0], trace).toContain('INSERT INTO idempotency_keys');
    expect(statements[1]).toBe('BEGIN … COMMIT');
    expect(
      statements.filter((sql) => /FOR UPDATE|count\(/.test(sql)),
      trace,
    ).toEqual([]);
    const locking = statements.findIndex((sql) => /svc_take_computer_place/.test(sql));
    expect(locking, trace).toBe(statements.length - 1);
    expect(statements[locking], trace).toMatch(/\(with the COMMIT\)$/);
    expect(statements.at(-2), trace).toContain('UPDATE idempotency_keys');
    // Moving the counter announces nothing (migration 009): the members' cached access stays warm.
    const after = await counting.measure(() => t.call('GET', '/v1/me', { token: team.editor.token }));
    expect(after.statements).toEqual([]);
  });

  test('a key list: two round trips once warm (the account with its reach, then the page)', async () => {
    const created = await t.call('POST', `/v1/workspaces/${team.workspace.id}/service-accounts`, {
      token: team.admin.token,
      body: { name: unique('ci'), role: 'viewer' },
    });
    expect(created.status).toBe(201);
    const path = `/v1/workspaces/${team.workspace.id}/service-accounts/${created.body.service_account.id}/keys`;
    await t.call('GET', path, { token: team.admin.token });
    const { result, statements } = await counting.measure(() =>
      t.call('GET', path, { token: team.admin.token }),
    );
    expect(result.status).toBe(200);
    expect(statements, statements.join('\n')).toHaveLength(2);
  });
});

// What a create sends to PostgreSQL, message by message: `pg` sends each `client.query` as one message
// (a simple query, or Parse/Bind/Execute/Sync with parameters) and waits for its answer before the
// next. The counter's statement must share its message with the COMMIT, so nobody waits on the
// workspace's row while this process turns around.
describePostgres('messages of a create on PostgreSQL', (engine) => {
  const scope = new AsyncLocalStorage<string[]>();
  const original = pg.Client.prototype.query;
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [query] = args;
      scope.getStore()?.push(typeof query === 'string' ? query : (query as pg.QueryConfig).text);
      return (original as (...args: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    t = await openTestApp(engine, {
      env: { SVC_RATE_LIMITS: 'off', SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '20' },
    });
    team = await t.team();
  });
  afterAll(async () => {
    pg.Client.prototype.query = original;
    await t.close();
  });

  test('the claim, BEGIN, three statements, then the counter and the COMMIT in one message', async () => {
    await t.call('GET', '/v1/me', { token: team.editor.token }); // warms the principal cache
    const messages: string[] = [];
    const result = await scope.run(messages, () =>
      t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
        token: team.editor.token,
        body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
      }),
    );
    expect(result.status).toBe(202);
    const trace = messages.join('\n---\n');
    // The test's `call` first waits for notifications itself (a `SELECT 1` on the listening connection).
    const [harness, ...create] = messages;
    expect(harness, trace).toBe('SELECT 1');
    expect(create[0], trace).toContain('INSERT INTO idempotency_keys');
    expect(create[1], trace).toBe('BEGIN');
    expect(create[5], trace).toBe(`SELECT svc_take_computer_place('${team.workspace.id}', 20);\nCOMMIT`);
    // Nothing else commits or touches the counter; after the commit, only the notification barrier
    // (`SELECT 1` on the listening connection, so this replica's caches have seen the change).
    expect(
      create.filter((sql) => /COMMIT|live_computers/.test(sql)),
      trace,
    ).toEqual([create[5]]);
    expect(create.slice(6), trace).toEqual(['SELECT 1']);
  });
});
