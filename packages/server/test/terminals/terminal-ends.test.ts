// How terminals end, each with a final `exit` event that says why (design §17): their computer stops or
// is deleted (`computer_stopped`), nobody used one for the idle time (`idle`), the replica holding it
// stops (`server_stopped`); a closed one is gone after its retention; and opens made at once never
// get past the quotas. Simulated driver; the idle time and the retention shortened by environment.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { errorOf, openTestApp, type Team, type TestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { type OpenedStream, opened, openStream } from '../support/streams.js';

describeEngines('terminals: how they end, and the quotas under concurrent opens', (engine) => {
  let t: TestApp;
  let team: Team;
  const streams: OpenedStream[] = [];
  beforeAll(async () => {
    t = await openTestApp(engine, {
      env: {
        SVC_TERMINALS_PER_COMPUTER: '3',
        SVC_TERMINALS_PER_WORKSPACE: '5',
        SVC_TERMINAL_IDLE_SECONDS: '1',
        SVC_TERMINAL_RETENTION_SECONDS: '1',
      },
    });
    team = await t.team();
  });
  afterAll(async () => {
    for (const stream of streams) {
      await stream.close();
      expect(stream.violations).toEqual([]);
    }
    await t.close();
  });

  const ws = () => `/v1/workspaces/${team.workspace.id}`;
  async function running(): Promise<string> {
    const created = await t.call('POST', `${ws()}/computers`, {
      token: team.editor.token,
      body: { name: unique('ends'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=10`, {
      token: team.editor.token,
    });
    return created.body.computer.id;
  }
  const base = (computer: string) => `${ws()}/computers/${computer}/terminals`;
  const open = (computer: string) =>
    t.call('POST', base(computer), { token: team.editor.token, body: { cols: 80, rows: 24 } });
  const follow = async (computer: string, id: string) => {
    const stream = opened(
      await openStream(t.app.fetch, `${base(computer)}/${id}/output`, 'TerminalOutputStreamItem', {
        token: team.editor.token,
      }),
    );
    streams.push(stream);
    return stream;
  };
  const operationDone = async (answer: { body: { operations: { id: string }[] } }) =>
    t.call('GET', `/v1/operations/${answer.body.operations[0]?.id}?wait=10`, { token: team.editor.token });
  const closeAll = async (computer: string) => {
    const list = await t.call('GET', base(computer), { token: team.editor.token });
    for (const terminal of list.body.terminals)
      if (terminal.state === 'open')
        await t.call('DELETE', `${base(computer)}/${terminal.id}`, { token: team.editor.token });
  };

  test('a computer that stops ends its terminals with `computer_stopped`, as the final event', async () => {
    const computer = await running();
    const { body } = await open(computer);
    const stream = await follow(computer, body.terminal.id);
    await stream.waitFor((e) => e.event === 'output');
    const stop = await t.call('POST', `${ws()}/computers/${computer}/stop`, { token: team.editor.token });
    expect(stop.status).toBe(202);
    const exit = await stream.waitFor((e) => e.event === 'exit', 5000);
    expect(exit.data).toMatchObject({ reason: 'computer_stopped' });
    await stream.closed;
    expect(stream.events.at(-1)?.event).toBe('exit');
    const got = await t.call('GET', `${base(computer)}/${body.terminal.id}`, { token: team.viewer.token });
    expect(got.body.terminal).toMatchObject({ state: 'closed', end_reason: 'computer_stopped' });
    await operationDone(stop);
  });

  test('a computer deleted with a terminal open ends it with `computer_stopped` too', async () => {
    const computer = await running();
    const { body } = await open(computer);
    const stream = await follow(computer, body.terminal.id);
    await stream.waitFor((e) => e.event === 'output');
    const deleted = await t.call('DELETE', `${ws()}/computers/${computer}`, { token: team.editor.token });
    expect(deleted.status).toBe(202);
    const exit = await stream.waitFor((e) => e.event === 'exit', 5000);
    expect(exit.data).toMatchObject({ reason: 'computer_stopped' });
    await operationDone(deleted);
  });

  test('a terminal nobody used for the idle time ends with `idle`; a closed one is gone after its retention', async () => {
    const computer = await running();
    const { body } = await open(computer);
    const id = body.terminal.id;
    // Used now (the screen is read): the sweep leaves it.
    await t.call('GET', `${base(computer)}/${id}/screen`, { token: team.editor.token });
    await t.app.deps.terminals.sweep();
    expect(
      (await t.call('GET', `${base(computer)}/${id}`, { token: team.editor.token })).body.terminal.state,
    ).toBe('open');
    await new Promise((resolve) => setTimeout(resolve, 1300));
    await t.app.deps.terminals.sweep();
    const stream = await follow(computer, id);
    const exit = await stream.waitFor((e) => e.event === 'exit', 5000);
    expect(exit.data).toMatchObject({ reason: 'idle', exit_code: 129 });
    const got = await t.call('GET', `${base(computer)}/${id}`, { token: team.editor.token });
    expect(got.body.terminal).toMatchObject({ state: 'closed', end_reason: 'idle' });
    // Kept for its retention (1 s here), then purged with its output.
    await t.app.deps.terminals.sweep();
    expect((await t.call('GET', `${base(computer)}/${id}`, { token: team.editor.token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    await t.app.deps.terminals.sweep();
    const gone = await t.call('GET', `${base(computer)}/${id}`, { token: team.editor.token });
    expect(gone.status).toBe(404);
    expect(errorOf(gone).code).toBe('not_found');
  });

  test('twelve opens at once on one computer: exactly its quota (3) open, the rest 403 terminals_per_computer', async () => {
    const computer = await running();
    const answers = await Promise.all(Array.from({ length: 12 }, () => open(computer)));
    const made = answers.filter((a) => a.status === 201);
    expect(made).toHaveLength(3);
    for (const refused of answers.filter((a) => a.status !== 201))
      expect(errorOf(refused)).toMatchObject({
        code: 'quota_exceeded',
        details: { quota: 'terminals_per_computer', limit: 3 },
      });
    const list = await t.call('GET', base(computer), { token: team.editor.token });
    expect(list.body.terminals.filter((x: { state: string }) => x.state === 'open')).toHaveLength(3);
    await closeAll(computer);
  });

  test('opens at once on three computers: never past the workspace quota (5)', async () => {
    const computers = [await running(), await running(), await running()];
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => open(computers[i % 3] as string)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    for (const refused of answers.filter((a) => a.status !== 201))
      expect(errorOf(refused).code).toBe('quota_exceeded');
    expect(
      answers.some((a) => a.status === 403 && errorOf(a).details.quota === 'terminals_per_workspace'),
    ).toBe(true);
    for (const computer of computers) await closeAll(computer);
  });
});
