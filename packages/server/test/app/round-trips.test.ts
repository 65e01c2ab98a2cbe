// How many database round trips an authenticated read costs (issue: fast reads), and what a create
// runs and in which order. The app's database is wrapped in a counting decorator (statements inside a
// transaction too); AsyncLocalStorage attributes each statement to the request that ran it, so the
// operation worker's own queries in the background are not counted. Rate limits are off: on PostgreSQL
// the shared rate-limit counter is one more statement per request, by design.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database, FinalStatement, Queryable } from '../../src/db/database.js';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp, unique } from '../support/app.js';
import { describeEngines, describePostgres } from '../support/databases.js';

/** Counts the statements (and transactions) run inside `measure`, per call. */
function countingDatabase() {
  const scope = new AsyncLocalStorage<string[]>();
  /** `finals`: in a transaction, where its final statements wait for the COMMIT, to be counted then. */
  const counted = <Q extends Queryable>(db: Q, finals?: string[]): Q => ({
    ...db,
    query: (sql: string, params?: unknown[]) => {
      scope.getStore()?.push(sql);
      return db.query(sql, params);
    },
    commitWith: (statement: FinalStatement) => {
      if (finals) finals.push(`${statement.sql} (with the COMMIT)`);
      else scope.getStore()?.push(statement.sql);
      return db.commitWith(statement);
    },
  });
  const wrap = (db: Database): Database => ({
    ...counted(db),
    transaction: (fn) => {
      scope.getStore()?.push('BEGIN … COMMIT');
      return db.transaction(async (tx) => {
        const finals: string[] = [];
        const result = await fn(counted(tx, finals));
        scope.getStore()?.push(...finals);
        return result;
      });
    },
  });
  const measure = async <T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> => {
    const statements: string[] = [];
    const result = await scope.run(statements, fn);
    return { result, statements };
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
  });
  afterAll(() => t.close());

  const reads = () => [
    { name: 'GET /me', path: '/v1/me' },
    { name: 'GET a computer', path: `/v1/workspaces/${team.workspace.id}/computers/${computer}` },
    {
      name: 'GET a computer by workspace name',
      path: `/v1/workspaces/${team.workspace.name}/computers/${computer}`,
    },
    { name: 'list computers', path: `/v1/workspaces/${team.workspace.id}/computers` },
  ];

  test('a cold read costs one round trip more than a warm one: the principal and its memberships', async () => {
    const { result, statements } = await counting.measure(() =>
      t.call('GET', '/v1/me', { token: team.viewer.token }),
    );
    expect(result.status).toBe(200);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('FROM principals p');
  });

  test('warm: GET /me costs none; a computer and a list page cost one', async () => {
    for (const read of reads()) {
      await t.call('GET', read.path, { token: team.viewer.token }); // warms the principal cache
      const { result, statements } = await counting.measure(() =>
        t.call('GET', read.path, { token: team.viewer.token }),
      );
      expect(result.status, read.name).toBe(200);
      expect(statements, `${read.name}: ${statements.join('\n')}`).toHaveLength(
        read.name === 'GET /me' ? 0 : 1,
      );
    }
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
