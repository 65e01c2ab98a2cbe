// Waiting for a computer's state (`GET …/computers/{computer}?wait_for=…&wait=N`): one request per
// wait, answered within a second of the change whoever made it (SQL on another connection, an
// operation on another replica), a documented answer on timeout, and a bound per principal.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type App, createApp } from '../../src/compose/app.js';
import type { Database, Queryable } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, ORIGIN, openTestApp, unique } from '../support/app.js';
import { describeEngines, describePostgres } from '../support/databases.js';
import { callReplica, replicaConfig } from '../support/replicas.js';

describeEngines('handlers: waiting for a computer state', (engine) => {
  let t: TestApp;
  let team: Team;
  /** Statements that read the computers table, counted while a wait holds. */
  let computerReads = 0;
  beforeAll(async () => {
    t = await openTestApp(engine, {
      env: { SVC_COMPUTER_WAITS_PER_PRINCIPAL: '2' },
      wrapDb: (db) => countComputerReads(db, () => computerReads++),
    });
    team = await t.team();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.id}`;

  /** A running computer of its own (so no other test's change wakes its waits). */
  async function runningComputer(): Promise<string> {
    const created = await t.call('POST', `${ws()}/computers`, {
      token: team.editor.token,
      body: { name: unique('wait'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    const done = await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=10`, {
      token: team.editor.token,
    });
    expect(done.body.operation.state).toBe('succeeded');
    return created.body.computer.id;
  }
  /** Moves the computer in SQL, as the reconciler or another replica would: no request of ours. */
  const setState = (id: string, state: string) =>
    t.db.query(
      `UPDATE computers SET state = $2, updated_at = now(),
         deleted_at = CASE WHEN $2 = 'deleted' THEN now() END WHERE id = $1`,
      [id, state],
    );

  test('already in a named state: 200 at once, Wait-Result: reached', async () => {
    const id = await runningComputer();
    const started = Date.now();
    const answer = await t.call('GET', `${ws()}/computers/${id}?wait_for=stopped,running&wait=30`, {
      token: team.viewer.token,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.computer.state).toBe('running');
    expect(answer.headers.get('wait-result')).toBe('reached');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('one request answers within a second of the state being reached, with no polling meanwhile', async () => {
    const id = await runningComputer();
    let requests = 0;
    const pending = (async () => {
      requests++;
      const answer = await t.call('GET', `${ws()}/computers/${id}?wait_for=stopped&wait=30`, {
        token: team.viewer.token,
      });
      return { answer, at: Date.now() };
    })();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const readsWhileHeld = computerReads;
    await setState(id, 'stopped');
    const changedAt = Date.now();
    const { answer, at } = await pending;
    const wakeMs = at - changedAt;
    console.log(`[${engine.name}] wait answered ${wakeMs} ms after the change, in ${requests} request`);
    expect(answer.status).toBe(200);
    expect(answer.body.computer.state).toBe('stopped');
    expect(answer.headers.get('wait-result')).toBe('reached');
    expect(requests).toBe(1);
    expect(wakeMs).toBeLessThan(1000);
    // Held 1.5 s without a statement: woken by the notification, not by a sleep loop.
    expect(computerReads - readsWhileHeld).toBeLessThanOrEqual(2);
  });

  test('timeout: 200 with the computer as it stands and Wait-Result: timed_out', async () => {
    const id = await runningComputer();
    const started = Date.now();
    const before = computerReads;
    const answer = await t.call('GET', `${ws()}/computers/${id}?wait_for=stopped&wait=2`, {
      token: team.viewer.token,
    });
    const took = Date.now() - started;
    expect(answer.status).toBe(200);
    expect(answer.body.computer.state).toBe('running');
    expect(answer.headers.get('wait-result')).toBe('timed_out');
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(3500);
    // The first read and the one after the timeout: nothing between.
    expect(computerReads - before).toBeLessThanOrEqual(2);
  });

  test('a deleted computer answers at once, Wait-Result: unreachable', async () => {
    const id = await runningComputer();
    await setState(id, 'deleted');
    const answer = await t.call('GET', `${ws()}/computers/${id}?wait_for=running&wait=30`, {
      token: team.viewer.token,
    });
    expect(answer.body.computer.state).toBe('deleted');
    expect(answer.headers.get('wait-result')).toBe('unreachable');
  });

  test('a name that is no computer state: 400 invalid_argument naming wait_for', async () => {
    const answer = await t.call('GET', `${ws()}/computers/x1?wait_for=runing&wait=1`, {
      token: team.viewer.token,
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({
      code: 'invalid_argument',
      details: { field_violations: [{ field: 'wait_for' }] },
    });
  });

  test('without wait_for, wait is ignored and nothing changes (no Wait-Result)', async () => {
    const id = await runningComputer();
    const answer = await t.call('GET', `${ws()}/computers/${id}?wait=30`, { token: team.viewer.token });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('wait-result')).toBeNull();
  });

  test('at most N waits held per principal: one more is 429 computer-waits; others are not refused', async () => {
    const id = await runningComputer();
    const path = `${ws()}/computers/${id}?wait_for=stopped&wait=30`;
    const held = [1, 2].map(() => t.call('GET', path, { token: team.viewer.token }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await t.call('GET', path, { token: team.viewer.token });
    expect(refused.status).toBe(429);
    expect(errorOf(refused)).toMatchObject({
      code: 'rate_limited',
      details: { policy: 'computer-waits', retry_after_seconds: 1 },
    });
    expect(refused.headers.get('retry-after')).toBe('1');
    // A wait that answers at once takes no slot; another principal has slots of its own.
    const now = await t.call('GET', `${ws()}/computers/${id}?wait_for=running&wait=30`, {
      token: team.viewer.token,
    });
    expect(now.status).toBe(200);
    const other = t.call('GET', path, { token: team.editor.token });
    await setState(id, 'stopped');
    for (const answer of [...(await Promise.all(held)), await other]) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('wait-result')).toBe('reached');
    }
    // The slots are given back when the waits answer.
    const again = await t.call('GET', `${ws()}/computers/${id}?wait_for=running&wait=1`, {
      token: team.viewer.token,
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('wait-result')).toBe('timed_out');
  });

  test('a caller who hangs up ends its wait and gives its slot back', async () => {
    const id = await runningComputer();
    const hangUps = [1, 2].map(() => new AbortController());
    const held = hangUps.map(async (controller) => {
      const response = await t.app.fetch(
        new Request(`${ORIGIN}${ws()}/computers/${id}?wait_for=stopped&wait=30`, {
          headers: { authorization: `Bearer ${team.admin.token}` },
          signal: controller.signal,
        }),
      );
      return { status: response.status, result: response.headers.get('wait-result') };
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    for (const controller of hangUps) controller.abort();
    expect(await Promise.all(held)).toEqual([
      { status: 200, result: 'timed_out' },
      { status: 200, result: 'timed_out' },
    ]);
    expect(Date.now() - started).toBeLessThan(1000);
    const next = await t.call('GET', `${ws()}/computers/${id}?wait_for=stopped&wait=1`, {
      token: team.admin.token,
    });
    expect(next.status).toBe(200);
  });
});

describePostgres('handlers: waiting for a computer state on two replicas', (engine) => {
  let one: App;
  let two: App;
  let token: string;
  let ws: string;
  beforeAll(async () => {
    const first = await engine.open();
    const second = await engine.replica(first);
    one = await createApp({ config: replicaConfig, db: first, responseValidation: 'throw' });
    two = await createApp({ config: replicaConfig, db: second, responseValidation: 'throw' });
    await one.start();
    const ownerId = newId();
    await first.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [
      ownerId,
      unique('o'),
    ]);
    token = (await one.deps.tokens.issue(ownerId)).access_token;
    const created = await callReplica(one, 'POST', '/v1/workspaces', token, { name: unique('ws') });
    ws = `/v1/workspaces/${created.body.workspace.id}`;
  });
  afterAll(async () => {
    for (const app of [one, two]) await app?.close();
  });

  test('a wait held on one replica is answered when an operation on the other stops the computer', async () => {
    const box = await callReplica(one, 'POST', `${ws}/computers`, token, {
      name: unique('box'),
      size: 'small',
      image: 'ubuntu-2404',
    });
    const created = await callReplica(
      one,
      'GET',
      `/v1/operations/${box.body.operations[0].id}?wait=10`,
      token,
    );
    expect(created.body.operation.state).toBe('succeeded');
    const path = `${ws}/computers/${box.body.computer.id}`;
    const waiting = (async () => {
      const response = await two.fetch(
        new Request(`http://svc.test${path}?wait_for=stopped,failed&wait=30`, {
          headers: { authorization: `Bearer ${token}` },
        }),
      );
      return { response, at: Date.now() };
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stop = await callReplica(one, 'POST', `${path}/stop`, token);
    expect(stop.status).toBe(202);
    const done = await callReplica(one, 'GET', `/v1/operations/${stop.body.operations[0].id}?wait=10`, token);
    expect(done.body.operation.state).toBe('succeeded');
    const { response, at } = await waiting;
    const body = (await response.json()) as { computer: { state: string } };
    const wakeMs = at - Date.parse(done.body.operation.completed_at);
    console.log(`[postgres, two replicas] wait answered ${wakeMs} ms after the stop completed on the other`);
    expect(response.status).toBe(200);
    expect(response.headers.get('wait-result')).toBe('reached');
    expect(body.computer.state).toBe('stopped');
    expect(wakeMs).toBeLessThan(1000);
  });
});

/** The database, counting statements that read the computers table. */
function countComputerReads(db: Database, count: () => void): Database {
  const query: Queryable['query'] = (sql, params) => {
    if (/\bFROM computers\b/i.test(sql) && /^\s*(WITH|SELECT)/i.test(sql)) count();
    return db.query(sql, params);
  };
  return { ...db, query };
}
