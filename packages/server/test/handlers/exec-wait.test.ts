// The command right after a create (`POST …/exec?wait=N`): one request that waits for the computer on
// its way to running, woken by its change (not a poll), the same 409 as without `wait` when the wait
// runs out or the computer comes to rest elsewhere, no pooled connection held, and a caller who hangs up
// ends its wait.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database, Queryable } from '../../src/platform/db/database.js';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, ORIGIN, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

/** A simulated step: a create (creating, then starting) takes about 8 of them. */
const STEP_MS = 250;

describeEngines('handlers: exec waiting for a computer on its way to running', (engine) => {
  let t: TestApp;
  let team: Team;
  let computerReads = 0;
  beforeAll(async () => {
    t = await openTestApp(engine, {
      env: { SVC_SIM_STEP_MS: String(STEP_MS), SVC_COMPUTER_WAITS_PER_PRINCIPAL: '2' },
      wrapDb: (db) => countComputerReads(db, () => computerReads++),
    });
    team = await t.team();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.id}`;
  const echo = { argv: ['echo', 'hi'] };

  /** A create, answered at once (`creating`): its computer's path and its operation's id. */
  async function creating(labels: Record<string, string> = {}): Promise<{ path: string; operation: string }> {
    const created = await t.call('POST', `${ws()}/computers`, {
      token: team.editor.token,
      body: { name: unique('exec-wait'), size: 'small', image: 'ubuntu-2404', labels },
    });
    expect(created.status).toBe(202);
    return {
      path: `${ws()}/computers/${created.body.computer.id}`,
      operation: created.body.operations[0].id,
    };
  }
  const settle = (operation: string) =>
    t.call('GET', `/v1/operations/${operation}?wait=30`, { token: team.editor.token });

  test('right after a create: one request, answered once the computer runs, with no polling meanwhile', async () => {
    const { path, operation } = await creating();
    const before = computerReads;
    const started = Date.now();
    const ran = await t.call('POST', `${path}/exec?wait=30`, { token: team.editor.token, body: echo });
    const answeredAt = Date.now();
    const took = answeredAt - started;
    expect(ran.status).toBe(200);
    expect(ran.body.execution).toMatchObject({ exit_code: 0, stdout: 'hi\n' });
    const op = await settle(operation);
    const runningAt = Date.parse(op.body.operation.completed_at);
    console.log(
      `[${engine.name}] exec answered ${answeredAt - runningAt} ms after the create completed, ${took} ms in all`,
    );
    expect(took).toBeGreaterThanOrEqual(STEP_MS);
    // Woken by the computer's changes (creating → starting → running, and its operation's), not a loop.
    expect(computerReads - before).toBeLessThanOrEqual(8);
  });

  test('the wait runs out: the same 409 operation_in_progress as without wait', async () => {
    const { path, operation } = await creating();
    const without = await t.call('POST', `${path}/exec`, { token: team.editor.token, body: echo });
    const started = Date.now();
    const waited = await t.call('POST', `${path}/exec?wait=1`, { token: team.editor.token, body: echo });
    const took = Date.now() - started;
    expect(waited.status).toBe(409);
    expect(errorOf(waited)).toMatchObject({
      code: 'operation_in_progress',
      details: { operation_id: operation },
    });
    expect({ ...errorOf(waited), request_id: '', message: '' }).toEqual({
      ...errorOf(without),
      request_id: '',
      message: '',
    });
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(2500);
    await settle(operation);
  });

  test('the computer comes to rest elsewhere (a failed create): 409 invalid_state at once', async () => {
    const { path, operation } = await creating({ 'sim-fail': 'create' });
    const ran = await t.call('POST', `${path}/exec?wait=30`, { token: team.editor.token, body: echo });
    const op = await settle(operation);
    expect(op.body.operation.state).toBe('failed');
    expect(ran.status).toBe(409);
    expect(errorOf(ran)).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'failed', allowed_from: ['running'] },
    });
    expect(Date.now() - Date.parse(op.body.operation.completed_at)).toBeLessThan(1000);
  });

  test('a stopped computer is not waited for: 409 invalid_state at once', async () => {
    const { path, operation } = await creating();
    await settle(operation);
    const stop = await t.call('POST', `${path}/stop`, { token: team.editor.token });
    await settle(stop.body.operations[0].id);
    const started = Date.now();
    const ran = await t.call('POST', `${path}/exec?wait=30`, { token: team.editor.token, body: echo });
    expect(ran.status).toBe(409);
    expect(errorOf(ran)).toMatchObject({ code: 'invalid_state', details: { current_state: 'stopped' } });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('a wait holds no pooled connection: other requests answer meanwhile (PGlite has one)', async () => {
    const { path, operation } = await creating();
    const held = t.call('POST', `${path}/exec?wait=30`, { token: team.editor.token, body: echo });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    const read = await t.call('GET', ws(), { token: team.viewer.token });
    expect(read.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(STEP_MS);
    expect((await held).status).toBe(200);
    await settle(operation);
  });

  test('a caller who hangs up ends its wait and gives its slot back', async () => {
    const { path, operation } = await creating();
    const hangUps = [1, 2].map(() => new AbortController());
    const held = hangUps.map((controller) =>
      t.app
        .fetch(
          new Request(`${ORIGIN}${path}/exec?wait=30`, {
            method: 'POST',
            headers: { authorization: `Bearer ${team.admin.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(echo),
            signal: controller.signal,
          }),
        )
        .then((response) => response.status),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Both of the principal's slots are held: a third wait is refused.
    const third = await t.call('POST', `${path}/exec?wait=30`, { token: team.admin.token, body: echo });
    expect(third.status).toBe(429);
    expect(errorOf(third)).toMatchObject({ code: 'rate_limited', details: { policy: 'computer-waits' } });
    const started = Date.now();
    for (const controller of hangUps) controller.abort();
    // Answered (to nobody) at once, not when the computer runs: the 409 of the moment.
    expect(await Promise.all(held)).toEqual([409, 409]);
    expect(Date.now() - started).toBeLessThan(STEP_MS);
    const next = await t.call('POST', `${path}/exec?wait=30`, { token: team.admin.token, body: echo });
    expect(next.status).toBe(200);
    await settle(operation);
  });

  test.each([
    ['above 60', '61'],
    ['negative', '-1'],
    ['not an integer', '1.5'],
    ['not a number', 'soon'],
  ])('wait %s: 400 invalid_argument naming wait', async (_name, value) => {
    const answer = await t.call('POST', `${ws()}/computers/x1/exec?wait=${value}`, {
      token: team.editor.token,
      body: echo,
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({
      code: 'invalid_argument',
      details: { field_violations: [{ field: 'query.wait' }] },
    });
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
