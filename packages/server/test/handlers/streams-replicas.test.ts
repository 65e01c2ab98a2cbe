// Event streams across replicas (two apps on one PostgreSQL database, as behind a load balancer): a
// change made through one reaches a stream served by the other within a second, a client that drops
// its connection resumes on the other replica with exactly the events it missed, and a revocation made
// on one ends the streams of the other.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type App, createApp } from '../../src/compose/app.js';
import { newId } from '../../src/platform/ids.js';
import { unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';
import { callReplica, replicaConfig } from '../support/replicas.js';
import { type OpenedStream, opened, openStream } from '../support/streams.js';

describePostgres('handlers: event streams on two replicas', (engine) => {
  let one: App;
  let two: App;
  let owner: string;
  let ws: string;
  let computer: string;
  const streams: OpenedStream[] = [];
  beforeAll(async () => {
    const first = await engine.open();
    const second = await engine.replica(first);
    const config = { ...replicaConfig, streamKeepaliveMs: 200 };
    one = await createApp({ config, db: first, responseValidation: 'throw' });
    two = await createApp({ config, db: second, responseValidation: 'throw' });
    await one.start();
    owner = (await user(one)).token;
    const created = await callReplica(one, 'POST', '/v1/workspaces', owner, { name: unique('ws') });
    ws = `/v1/workspaces/${created.body.workspace.id}`;
    const made = await callReplica(one, 'POST', `${ws}/computers`, owner, {
      name: unique('c'),
      size: 'small',
      image: 'ubuntu-2404',
    });
    computer = made.body.computer.id;
    await callReplica(one, 'GET', `/v1/operations/${made.body.operations[0].id}?wait=10`, owner);
  });
  afterAll(async () => {
    for (const stream of streams) {
      await stream.close();
      expect(stream.violations).toEqual([]);
    }
    for (const app of [one, two]) await app?.close();
  });

  async function user(app: App): Promise<{ id: string; token: string }> {
    const id = newId();
    await app.db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [id, unique('u')]);
    return { id, token: (await app.deps.tokens.issue(id)).access_token };
  }
  const touch = (app: App, value: string) =>
    callReplica(app, 'PATCH', `${ws}/computers/${computer}`, owner, { labels: { touched: value } });
  const events = async (app: App, token: string, headers: Record<string, string> = {}) => {
    const stream = opened(
      await openStream(app.fetch, `${ws}/events`, 'WorkspaceEventStreamItem', { token, headers }),
    );
    streams.push(stream);
    return stream;
  };
  const touched = (value: string) => (e: { data: { computer?: { labels?: Record<string, string> } } }) =>
    e.data.computer?.labels?.touched === value;

  test('a change made on replica A reaches a stream on replica B within a second', async () => {
    const stream = await events(two, owner);
    for (let i = 0; i < 3; i++) {
      const value = unique('cross');
      const answered = performance.now();
      expect((await touch(one, value)).status).toBe(200);
      const event = await stream.waitFor(touched(value), 2000);
      expect(event.at - answered).toBeLessThan(1000);
    }
  });

  test('a dropped connection resumes on the other replica with exactly the missed events', async () => {
    const first = await events(one, owner);
    await touch(two, 'before-drop');
    const last = await first.waitFor(touched('before-drop'));
    await first.close();
    // Missed while disconnected, made through both replicas.
    for (const [i, app] of [one, two, one].entries()) await touch(app, `missed-${i}`);
    const resumed = await events(two, owner, { 'last-event-id': last.id });
    await touch(one, 'live');
    await resumed.waitFor(touched('live'));
    const ids = resumed.events.map((e) => Number(e.id));
    expect(ids[0]).toBe(Number(last.id) + 1);
    expect(ids).toEqual(ids.map((_, i) => Number(last.id) + 1 + i));
    expect(
      resumed.events.filter((e) => e.data.computer?.labels?.touched?.startsWith('missed-')),
    ).toHaveLength(3);
    // The first stream's events and the resumed one's, joined, are the log with no gap and no repeat.
    const all = [...first.events, ...resumed.events].map((e) => Number(e.id));
    expect(new Set(all).size).toBe(all.length);
  });

  test("a member removed through replica A: replica B's stream ends access_revoked within a second", async () => {
    const { id: principal, token } = await user(one);
    const added = await callReplica(one, 'POST', `${ws}/members`, owner, {
      principal_id: principal,
      role: 'viewer',
    });
    expect(added.status).toBe(201);
    const stream = await events(two, token);
    const removed = performance.now();
    expect((await callReplica(one, 'DELETE', `${ws}/members/${added.body.member.id}`, owner)).status).toBe(
      204,
    );
    const ended = await stream.waitFor((e) => e.event === 'stream.ended', 2000);
    expect(ended.data).toMatchObject({ reason: 'access_revoked', reconnect: false });
    expect(ended.at - removed).toBeLessThan(1000);
  });

  test("a command run by replica A's worker: its output streamed by replica B, resumable there", async () => {
    const run = await callReplica(one, 'POST', `${ws}/computers/${computer}/run`, owner, {
      argv: ['echo', 'across'],
    });
    expect(run.status).toBe(202);
    const id = run.body.operations[0].id;
    const stream = opened(
      await openStream(two.fetch, `/v1/operations/${id}/output`, 'OperationOutputStreamItem', {
        token: owner,
      }),
    );
    streams.push(stream);
    await stream.closed;
    expect(stream.events.at(-1)?.event).toBe('exit');
    const stdout = stream.events
      .filter((e) => e.event === 'output' && e.data.stream === 'stdout')
      .map((e) => e.data.data)
      .join('');
    expect(stdout).toBe('across\n');
    const tail = opened(
      await openStream(
        one.fetch,
        `/v1/operations/${id}/output?after=${Number(stream.events.at(-1)?.id) - 1}`,
        'OperationOutputStreamItem',
        {
          token: owner,
        },
      ),
    );
    streams.push(tail);
    await tail.closed;
    expect(tail.events.map((e) => [e.event, e.id])).toEqual([['exit', stream.events.at(-1)?.id]]);
  });
});
