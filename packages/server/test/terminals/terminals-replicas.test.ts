// A terminal on two replicas (two apps on one PostgreSQL database, as behind a load balancer): opened
// through A, which holds its PTY, it is read, typed into, resized and its screen read through B (the
// inbox carries input and resizes to A); when A stops, the terminal ends with `server_stopped`, a final
// event B's reader gets and B's GET shows.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type App, createApp } from '../../src/compose/app.js';
import { newId } from '../../src/platform/ids.js';
import { ORIGIN, unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';
import { callReplica, replicaConfig } from '../support/replicas.js';
import { type OpenedStream, opened, openStream } from '../support/streams.js';

describePostgres('terminals on two replicas', (engine) => {
  let one: App;
  let two: App;
  let oneClosed = false;
  let token: string;
  let ws: string;
  let computer: string;
  const streams: OpenedStream[] = [];
  beforeAll(async () => {
    const first = await engine.open();
    const second = await engine.replica(first);
    one = await createApp({ config: replicaConfig, db: first, responseValidation: 'throw' });
    two = await createApp({ config: replicaConfig, db: second, responseValidation: 'throw' });
    await one.start();
    const id = newId();
    await one.db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [id, unique('u')]);
    token = (await one.deps.tokens.issue(id)).access_token;
    const created = await callReplica(one, 'POST', '/v1/workspaces', token, { name: unique('ws') });
    ws = `/v1/workspaces/${created.body.workspace.id}`;
    const made = await callReplica(one, 'POST', `${ws}/computers`, token, {
      name: unique('c'),
      size: 'small',
      image: 'ubuntu-2404',
    });
    computer = made.body.computer.id;
    await callReplica(one, 'GET', `/v1/operations/${made.body.operations[0].id}?wait=10`, token);
  });
  afterAll(async () => {
    for (const stream of streams) {
      await stream.close();
      expect(stream.violations).toEqual([]);
    }
    await two?.close();
    if (!oneClosed) await one?.close();
  });

  const base = () => `${ws}/computers/${computer}/terminals`;
  const type = async (app: App, id: string, text: string) =>
    (
      await app.fetch(
        new Request(`${ORIGIN}${base()}/${id}/input`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
          body: new TextEncoder().encode(text),
        }),
      )
    ).status;
  const text = (stream: OpenedStream) =>
    stream.events
      .filter((e) => e.event === 'output')
      .map((e) =>
        e.data.encoding === 'base64' ? Buffer.from(e.data.data, 'base64').toString('latin1') : e.data.data,
      )
      .join('');
  const until = async (what: () => boolean, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!what()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  test('opened through A; read, typed into, resized and its screen read through B; A stops: server_stopped', async () => {
    const created = await callReplica(one, 'POST', base(), token, { cols: 80, rows: 24 });
    expect(created.status).toBe(201);
    const id = created.body.terminal.id;
    expect(one.deps.terminals.holds(id)).toBe(true);
    expect(two.deps.terminals.holds(id)).toBe(false);

    const stream = opened(
      await openStream(two.fetch, `${base()}/${id}/output`, 'TerminalOutputStreamItem', { token }),
    );
    streams.push(stream);
    await until(() => text(stream).includes('$ '));
    expect(await type(two, id, 'echo through-b\r')).toBe(204);
    await until(() => text(stream).includes('through-b\r\n$ '));

    const resized = await callReplica(two, 'PATCH', `${base()}/${id}`, token, { cols: 100, rows: 30 });
    expect(resized.status).toBe(200);
    expect(resized.body.terminal).toMatchObject({ cols: 100, rows: 30 });
    await type(two, id, 'stty size\r');
    await until(() => text(stream).includes('30 100\r\n'));
    const screen = await callReplica(two, 'GET', `${base()}/${id}/screen`, token);
    expect(screen.body.screen).toMatchObject({ cols: 100, rows: 30 });
    expect(screen.body.screen.lines).toContain('30 100');

    // A stops: the PTY it held is gone; B's reader gets the final event, and B's GET says why.
    oneClosed = true;
    await one.close();
    const exit = await stream.waitFor((e) => e.event === 'exit', 5000);
    expect(exit.data).toMatchObject({ reason: 'server_stopped' });
    expect(exit.data).not.toHaveProperty('exit_code');
    await stream.closed;
    const got = await callReplica(two, 'GET', `${base()}/${id}`, token);
    expect(got.body.terminal).toMatchObject({ state: 'closed', end_reason: 'server_stopped' });
    // Input through B to the ended terminal is refused.
    expect(await type(two, id, 'echo late\r')).toBe(409);
  });
});
