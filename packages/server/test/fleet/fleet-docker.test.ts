// A fleet of real Docker Engines (design §4.4, issue #32), through the API and `svc-server hosts`:
// placement across Engines (spread), no capacity, a host that stops answering and comes back, cordon,
// drain, a host added while the app runs, and two replicas placing at once on one PostgreSQL database.
// Each scenario opens its own app on a fresh database with its own `svc.instance` label, over the
// same Engines; containers are counted per Engine by that label. PostgreSQL only: placement's row
// locks need real concurrent connections for the race, and a PGlite app here took 5 to 25 s to open
// on a loaded machine, more than the rest of a scenario.
import type Docker from 'dockerode';
import { afterAll, beforeAll, expect, onTestFailed, test } from 'vitest';
import { type App, createApp } from '../../src/compose/app.js';
import { runHostsCommand } from '../../src/compose/commands/hosts.js';
import { loadConfig } from '../../src/compose/config.js';
import { LABEL, labelFilter } from '../../src/computers/docker/labels.js';
import type { FleetDriver } from '../../src/fleet/fleet-driver.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { query } from '../handlers/files-support.js';
import {
  type Answer,
  errorOf,
  ORIGIN,
  openTestApp,
  type Team,
  type TestApp,
  unique,
} from '../support/app.js';
import { describePostgres, type EngineUnderTest } from '../support/databases.js';
import { describeEngines, type TestEngine } from '../support/engines.js';

/** Quick heartbeats; a host is unhealthy after a few of them are missed. */
const HEARTBEAT_MS = 200;
const UNHEALTHY_MS = 1500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The environment of one deployment: its app and its `svc-server hosts` commands share it. */
function fleetEnv(instance: string, policy: 'spread' | 'pack' = 'spread'): Record<string, string> {
  return {
    SVC_DRIVER: 'docker',
    SVC_DOCKER_HOST_NAME: '',
    SVC_DOCKER_INSTANCE: instance,
    SVC_DOCKER_SWEEP_MS: '60000',
    SVC_FLEET_POLICY: policy,
    SVC_HOST_HEARTBEAT_MS: String(HEARTBEAT_MS),
    SVC_HOST_UNHEALTHY_MS: String(UNHEALTHY_MS),
    // Containers are counted per Engine as computers' (each host would keep a pool of its own).
    SVC_POOL: 'off',
  };
}

/** `svc-server hosts …` against `db`, its output kept. */
async function hosts(
  db: Database,
  env: Record<string, string>,
  argv: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runHostsCommand(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
    db,
  });
  return { code, stdout, stderr };
}

/** `--capacity` of `hosts add`. */
const capacity = (vcpus: number, memoryMib: number, computers: number) =>
  `vcpus=${vcpus},memory_mib=${memoryMib},computers=${computers}`;

/** This deployment's containers on one Engine (by its instance label), optionally one computer's. */
function containersOn(engine: TestEngine, instance: string, computerId?: string) {
  return engine.docker.listContainers({ all: true, filters: { label: labelFilter(instance, computerId) } });
}

/** The whole of a tar stream, as text (a small file's bytes appear as they are). */
async function archiveText(container: Docker.Container, path: string): Promise<string> {
  const stream = (await container.getArchive({ path })) as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('latin1');
}

describeEngines('fleet: computers on several Docker Engines', 4, (engines) => {
  /** The first three Engines are registered at the start; the fourth is added while an app runs. */
  const engine = (name: 'e1' | 'e2' | 'e3' | 'e4') => engines()[Number(name.slice(1)) - 1] as TestEngine;
  const engineUrl = (name: 'e1' | 'e2' | 'e3' | 'e4') => `unix://${engine(name).socketPath}`;

  /** One deployment under test: an app on a fresh database, its hosts, a team. */
  interface Fleet {
    t: TestApp;
    /** What the app logged (its fleet's heartbeat and reconcilers log here). */
    logs: string[];
    team: Team;
    instance: string;
    env: Record<string, string>;
    driver: FleetDriver;
    ws: string;
    hosts(argv: string[]): ReturnType<typeof hosts>;
    /** The host id of a host name. */
    hostId(name: string): Promise<string>;
    /** The host name a computer lives on (from the database). */
    hostOf(computerId: string): Promise<string | null>;
    /** A create, answered; with `wait` the operation is awaited and must succeed. */
    create(body?: Record<string, unknown>, options?: { key?: string; wait?: boolean }): Promise<Answer>;
    settle(answer: Answer): Promise<{ state: string; error?: unknown }>;
    state(computerId: string): Promise<string>;
    /** Which registered Engines hold a container of the computer. */
    enginesOf(computerId: string): Promise<string[]>;
  }

  let current: Fleet | undefined;
  /** Prints the app's log when the running test fails. */
  function showLogsOnFailure(): void {
    const fleet = current;
    onTestFailed(() => console.log(fleet?.logs.join('\n')));
  }

  async function openFleet(
    db: EngineUnderTest,
    registered: [name: 'e1' | 'e2' | 'e3' | 'e4', capacity: string, zone: string][],
    options: { policy?: 'spread' | 'pack'; database?: Database } = {},
  ): Promise<Fleet> {
    const instance = `fleet-${newId()}`;
    const env = fleetEnv(instance, options.policy);
    const logs: string[] = [];
    const t = await openTestApp(db, {
      env,
      app: { log: (message, fields) => logs.push(`${message} ${JSON.stringify(fields ?? {})}`) },
    });

    const driver = t.app.deps.driver as FleetDriver;
    for (const [name, cap, zone] of registered) {
      const added = await hosts(t.db, env, [
        'add',
        name,
        '--engine',
        engineUrl(name),
        '--capacity',
        cap,
        '--label',
        `zone=${zone}`,
      ]);
      expect(added, added.stderr).toMatchObject({ code: 0 });
    }
    await driver.heartbeat();
    const team = await t.team();
    const ws = `/v1/workspaces/${team.workspace.id}`;
    const token = team.editor.token;
    const settle = async (answer: Answer) => {
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      const id = answer.body.operations[0].id;
      return (await t.call('GET', `/v1/operations/${id}?wait=30`, { token })).body.operation;
    };
    const fleet: Fleet = {
      t,
      logs,
      team,
      instance,
      env,
      driver,
      ws,
      hosts: (argv) => hosts(t.db, env, argv),
      hostId: async (name) =>
        (await t.db.query<{ id: string }>('SELECT id FROM hosts WHERE name = $1', [name])).rows[0]?.id ?? '',
      hostOf: async (computerId) =>
        (
          await t.db.query<{ name: string | null }>(
            'SELECT h.name FROM computers c LEFT JOIN hosts h ON h.id = c.host_id WHERE c.id = $1',
            [computerId],
          )
        ).rows[0]?.name ?? null,
      create: async (body = {}, { key, wait = true } = {}) => {
        const answer = await t.call('POST', `${ws}/computers`, {
          token,
          body: { name: unique('c'), size: 'small', image: 'busybox', ...body },
          ...(key ? { key } : {}),
        });
        if (wait) expect((await settle(answer)).state).toBe('succeeded');
        return answer;
      },
      settle,
      state: async (computerId) =>
        (await t.call('GET', `${ws}/computers/${computerId}`, { token })).body.computer.state,
      enginesOf: async (computerId) => {
        const found: string[] = [];
        for (const name of ['e1', 'e2', 'e3', 'e4'] as const)
          if ((await containersOn(engine(name), instance, computerId)).length > 0) found.push(name);
        return found;
      },
    };
    current = fleet;
    return fleet;
  }

  describePostgres('SVC_DRIVER=docker, SVC_FLEET_POLICY=spread', (db) => {
    let f: Fleet;
    const token = () => f.team.editor.token;
    beforeAll(async () => {
      // Room for four `small` computers (4 GiB each) per host; e4 (added later) for a `large` one.
      f = await openFleet(db, [
        ['e1', capacity(64, 16384, 10), 'a'],
        ['e2', capacity(64, 16384, 10), 'b'],
        ['e3', capacity(64, 16384, 10), 'c'],
      ]);
    }, 60_000);
    afterAll(async () => {
      for (const name of ['e1', 'e2', 'e3', 'e4'] as const) engine(name).resume();
      await f?.t.close();
    });
    const computers: Record<string, string> = {};

    test('three creates go one to each Engine; each runs, answers a command and takes a file', async () => {
      showLogsOnFailure();
      const listed = await f.hosts(['list', '--json']);
      expect(listed.code).toBe(0);
      expect(
        JSON.parse(listed.stdout).map((h: { name: string; state: string }) => [h.name, h.state]),
      ).toEqual([
        ['e1', 'healthy'],
        ['e2', 'healthy'],
        ['e3', 'healthy'],
      ]);
      // One after the other: concurrent creates may each see the same emptiest host (both fit there).
      const made = [await f.create(), await f.create(), await f.create()];
      for (const answer of made) {
        const id = answer.body.computer.id as string;
        const on = await f.enginesOf(id);
        expect(on).toHaveLength(1);
        expect(await f.hostOf(id)).toBe(on[0]);
        computers[on[0] as string] = id;
      }
      expect(Object.keys(computers).sort()).toEqual(['e1', 'e2', 'e3']);
      for (const [name, id] of Object.entries(computers)) {
        const path = `${f.ws}/computers/${id}`;
        expect(await f.state(id)).toBe('running');
        const [container] = await containersOn(engine(name as 'e1'), f.instance, id);
        expect(container?.State).toBe('running');
        const ran = await f.t.call('POST', `${path}/exec`, {
          token: token(),
          body: { argv: ['sh', '-c', `echo from-${name}; id -u`] },
        });
        expect(ran.body.execution).toMatchObject({ exit_code: 0, stdout: `from-${name}\n1000\n` });
        const put = await f.t.app.fetch(
          new Request(`${ORIGIN}${path}/files${query({ path: `/home/svc/where-${name}.txt` })}`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/octet-stream' },
            body: `written for ${name}\n`,
          }),
        );
        expect(put.status, await put.clone().text()).toBe(200);
        // On that Engine's container, and on no other Engine.
        const text = await archiveText(
          engine(name as 'e1').docker.getContainer(container?.Id as string),
          `/home/svc/where-${name}.txt`,
        );
        expect(text).toContain(`written for ${name}\n`);
      }
    }, 60_000);

    test('a host that stops answering: its computers go unknown, creates go elsewhere, actions are refused; back, nothing is duplicated', async () => {
      showLogsOnFailure();
      const id = computers.e1 as string;
      const before: Record<string, string[]> = {};
      for (const name of ['e1', 'e2', 'e3'] as const)
        before[name] = (await containersOn(engine(name), f.instance)).map((c) => c.Id).sort();
      await engine('e1').pause();
      try {
        // The app's own heartbeats (each ping of e1 hangs until its 2 s timeout).
        await expect.poll(() => f.state(id), { timeout: UNHEALTHY_MS + 5000, interval: 100 }).toBe('unknown');
        // The other hosts' heartbeats went on meanwhile, and go on: their computers stay running
        // through more than one hung ping of e1.
        await sleep(2500);
        expect(await f.state(computers.e2 as string)).toBe('running');
        expect(await f.state(computers.e3 as string)).toBe('running');
        const listed = await f.hosts(['list', '--json']);
        expect(JSON.parse(listed.stdout).find((h: { name: string }) => h.name === 'e1').state).toBe(
          'unhealthy',
        );
        const elsewhere = await f.create();
        const newId_ = elsewhere.body.computer.id as string;
        const on = await f.hostOf(newId_);
        expect(['e2', 'e3']).toContain(on);
        // (e1 is not asked: a request to a stopped Engine hangs.)
        expect(await containersOn(engine(on as 'e2'), f.instance, newId_)).toHaveLength(1);
        for (const action of ['stop', 'restart', 'start']) {
          const refused = await f.t.call('POST', `${f.ws}/computers/${id}/${action}`, { token: token() });
          expect(refused.status).toBe(409);
          expect(errorOf(refused)).toMatchObject({
            code: 'invalid_state',
            details: { current_state: 'unknown' },
          });
        }
        computers.during = newId_;
      } finally {
        engine('e1').resume();
      }
      await f.driver.heartbeat();
      await expect.poll(() => f.state(id), { timeout: 10_000 }).toBe('running');
      const ran = await f.t.call('POST', `${f.ws}/computers/${id}/exec`, {
        token: token(),
        body: { argv: ['cat', '/home/svc/where-e1.txt'] },
      });
      expect(ran.body.execution).toMatchObject({ exit_code: 0, stdout: 'written for e1\n' });
      const during = await f.hostOf(computers.during as string);
      for (const name of ['e1', 'e2', 'e3'] as const) {
        const now = await containersOn(engine(name), f.instance);
        const want = [...(before[name] ?? [])];
        if (name === during)
          want.push(...(await containersOn(engine(name), f.instance, computers.during)).map((c) => c.Id));
        expect(now.map((c) => c.Id).sort()).toEqual(want.sort());
        // One container per computer on each Engine.
        const owners = now.map((c) => c.Labels[LABEL.computer]);
        expect(new Set(owners).size).toBe(owners.length);
      }
      // Back to one computer per host for the next test.
      const removed = await f.t.call('DELETE', `${f.ws}/computers/${computers.during}`, { token: token() });
      expect((await f.settle(removed)).state).toBe('succeeded');
    }, 60_000);

    test('a cordoned host takes nothing new; uncordoned, it takes again', async () => {
      showLogsOnFailure();
      const cordoned = await f.hosts(['cordon', 'e2']);
      expect(cordoned).toMatchObject({ code: 0 });
      expect(cordoned.stdout).toContain('Cordoned e2');
      // Another replica hears of it at its next heartbeat; placement reads the row itself.
      const made = [await f.create(), await f.create()];
      const placed = await Promise.all(made.map((a) => f.hostOf(a.body.computer.id)));
      expect(placed.sort()).toEqual(['e1', 'e3']);
      expect(await containersOn(engine('e2'), f.instance)).toHaveLength(1);
      expect(await f.hosts(['uncordon', 'e2'])).toMatchObject({ code: 0 });
      // Now the emptiest host, it takes the next one.
      const next = await f.create();
      expect(await f.hostOf(next.body.computer.id)).toBe('e2');
      expect(await f.enginesOf(next.body.computer.id)).toEqual(['e2']);
    }, 60_000);

    test('a host added while the app runs takes computers after a heartbeat', async () => {
      showLogsOnFailure();
      // `large` needs 32 GiB: only e4 has room for it.
      const refused = await f.create({ size: 'large' }, { wait: false });
      expect(refused.status).toBe(503);
      expect(errorOf(refused)).toMatchObject({
        code: 'unavailable',
        details: { reason: 'no_capacity', resource: 'memory_mib' },
      });
      const added = await f.hosts([
        'add',
        'e4',
        '--engine',
        engineUrl('e4'),
        '--capacity',
        capacity(64, 65536, 10),
        '--label',
        'zone=d',
      ]);
      expect(added).toMatchObject({ code: 0 });
      // No explicit heartbeat: the app's own timer picks it up.
      await expect
        .poll(async () => f.driver.hostIds.includes(await f.hostId('e4')), { timeout: 5_000 })
        .toBe(true);
      let made: Answer | undefined;
      await expect
        .poll(
          async () => {
            made = await f.create({ size: 'large' }, { wait: false });
            return made.status;
          },
          { timeout: 5_000, interval: HEARTBEAT_MS },
        )
        .toBe(202);
      const id = made?.body.computer.id as string;
      expect((await f.settle(made as Answer)).state).toBe('succeeded');
      expect(await f.hostOf(id)).toBe('e4');
      expect(await f.enginesOf(id)).toEqual(['e4']);
      const ran = await f.t.call('POST', `${f.ws}/computers/${id}/exec`, {
        token: token(),
        body: { argv: ['echo', 'on e4'] },
      });
      expect(ran.body.execution).toMatchObject({ exit_code: 0, stdout: 'on e4\n' });
    }, 60_000);
  });

  describePostgres('SVC_DRIVER=docker, no capacity', (db) => {
    let f: Fleet;
    beforeAll(async () => {
      // One computer per host: three in all.
      f = await openFleet(db, [
        ['e1', capacity(64, 16384, 1), 'a'],
        ['e2', capacity(64, 16384, 1), 'b'],
        ['e3', capacity(64, 16384, 1), 'c'],
      ]);
    }, 60_000);
    afterAll(() => f?.t.close());

    test('the create past the fleet capacity is 503 no_capacity, creates nothing, and a retry with its key works once there is room', async () => {
      showLogsOnFailure();
      const made = [await f.create(), await f.create(), await f.create()];
      const ids = made.map((a) => a.body.computer.id as string);
      expect((await Promise.all(ids.map((id) => f.hostOf(id)))).sort()).toEqual(['e1', 'e2', 'e3']);
      const key = unique('key');
      const name = unique('over');
      const over = await f.create({ name }, { key, wait: false });
      expect(over.status).toBe(503);
      expect(over.headers.get('retry-after')).toBe('30');
      expect(errorOf(over)).toMatchObject({
        code: 'unavailable',
        details: { reason: 'no_capacity', resource: 'computers' },
      });
      // Too big for any host whatever is free: memory is named.
      const large = await f.create({ size: 'large' }, { wait: false });
      expect(errorOf(large)).toMatchObject({ details: { reason: 'no_capacity', resource: 'memory_mib' } });
      const listed = await f.t.call('GET', `${f.ws}/computers`, { token: f.team.editor.token });
      expect(listed.body.computers.map((c: { id: string }) => c.id).sort()).toEqual([...ids].sort());
      const rows = await f.t.db.query<{ n: number }>(
        'SELECT count(*)::integer AS n FROM computers WHERE workspace_id = $1',
        [f.team.workspace.id],
      );
      expect(rows.rows[0]?.n).toBe(3);
      const operations = await f.t.db.query<{ n: number }>(
        'SELECT count(*)::integer AS n FROM operations WHERE workspace_id = $1',
        [f.team.workspace.id],
      );
      expect(operations.rows[0]?.n).toBe(3);
      let containers = 0;
      for (const name of ['e1', 'e2', 'e3'] as const)
        containers += (await containersOn(engine(name), f.instance)).length;
      expect(containers).toBe(3);
      // A 503 is not kept for its key: the same retry is answered again, still 503 while full…
      const again = await f.create({ name }, { key, wait: false });
      expect(errorOf(again)).toMatchObject({ code: 'unavailable', details: { reason: 'no_capacity' } });
      // …and once a computer is deleted, the retry creates it, where the room is.
      const freed = await f.hostOf(ids[1] as string);
      const deleted = await f.t.call('DELETE', `${f.ws}/computers/${ids[1]}`, {
        token: f.team.editor.token,
      });
      expect((await f.settle(deleted)).state).toBe('succeeded');
      const retried = await f.create({ name }, { key });
      expect(retried.status).toBe(202);
      expect(retried.body.computer.name).toBe(name);
      expect(await f.hostOf(retried.body.computer.id)).toBe(freed);
      // And that answer is kept: the same key again answers the same computer, creating nothing.
      const replayed = await f.create({ name }, { key, wait: false });
      expect(replayed.status).toBe(202);
      expect(replayed.body.computer.id).toBe(retried.body.computer.id);
    }, 60_000);
  });

  describePostgres('SVC_DRIVER=docker, drain', (db) => {
    let f: Fleet;
    beforeAll(async () => {
      f = await openFleet(db, [
        ['e1', capacity(64, 65536, 10), 'a'],
        ['e2', capacity(64, 65536, 10), 'b'],
        ['e3', capacity(64, 65536, 10), 'c'],
      ]);
    }, 60_000);
    afterAll(() => f?.t.close());
    const token = () => f.team.editor.token;

    test('drain moves a stopped computer with its files, refuses a running one unless --stop-running; then remove', async () => {
      showLogsOnFailure();
      // Both on e1: the others cordoned meanwhile.
      expect(await f.hosts(['cordon', 'e2'])).toMatchObject({ code: 0 });
      expect(await f.hosts(['cordon', 'e3'])).toMatchObject({ code: 0 });
      const stopped = (await f.create()).body.computer;
      const running = (await f.create()).body.computer;
      expect(await f.hosts(['uncordon', 'e2'])).toMatchObject({ code: 0 });
      expect(await f.hosts(['uncordon', 'e3'])).toMatchObject({ code: 0 });
      expect([await f.hostOf(stopped.id), await f.hostOf(running.id)]).toEqual(['e1', 'e1']);
      const path = `${f.ws}/computers/${stopped.id}`;
      const wrote = await f.t.call('POST', `${path}/exec`, {
        token: token(),
        body: {
          argv: ['sh', '-c', 'mkdir -p /home/svc/data && echo kept-by-drain > /home/svc/data/kept.txt'],
        },
      });
      expect(wrote.body.execution).toMatchObject({ exit_code: 0 });
      expect((await f.settle(await f.t.call('POST', `${path}/stop`, { token: token() }))).state).toBe(
        'succeeded',
      );
      expect(await f.state(stopped.id)).toBe('stopped');

      const first = await f.hosts(['drain', 'e1']);
      expect(first.code, first.stdout + first.stderr).toBe(1);
      expect(first.stdout).toContain('cordoned e1');
      expect(first.stdout).toMatch(/Drained e1: 1 moved, 1 refused, 1 computers left on it/);
      expect(first.stdout).toContain(`refused ${running.name} (${running.id}): it is running`);
      expect(first.stdout).toContain('--stop-running');
      const to = await f.hostOf(stopped.id);
      expect(['e2', 'e3']).toContain(to);
      expect(await f.state(stopped.id)).toBe('stopped');
      expect(await f.enginesOf(stopped.id)).toEqual([to]);
      // The running one was left alone, running where it was.
      expect(await f.state(running.id)).toBe('running');
      expect(await f.hostOf(running.id)).toBe('e1');

      // The moved computer starts on its new host with its files.
      expect((await f.settle(await f.t.call('POST', `${path}/start`, { token: token() }))).state).toBe(
        'succeeded',
      );
      expect(await f.state(stopped.id)).toBe('running');
      const [container] = await containersOn(engine(to as 'e2'), f.instance, stopped.id);
      expect(container?.State).toBe('running');
      const read = await f.t.app.fetch(
        new Request(`${ORIGIN}${path}/files${query({ path: '/home/svc/data/kept.txt' })}`, {
          headers: { authorization: `Bearer ${token()}` },
        }),
      );
      expect(read.status).toBe(200);
      expect(await read.text()).toBe('kept-by-drain\n');
      expect(await containersOn(engine('e1'), f.instance, stopped.id)).toEqual([]);

      const second = await f.hosts(['drain', 'e1', '--stop-running']);
      expect(second.code, second.stdout + second.stderr).toBe(0);
      expect(second.stdout).toContain(`stopping ${running.name} (running)`);
      expect(second.stdout).toMatch(/Drained e1: 1 moved, 0 refused, 0 computers left on it/);
      expect(['e2', 'e3']).toContain(await f.hostOf(running.id));
      expect(await f.state(running.id)).toBe('stopped');
      expect(await containersOn(engine('e1'), f.instance)).toEqual([]);
      // Both still at rest a moment later: nothing on e1 (its old containers' events) moves them.
      await sleep(1500);
      expect([await f.state(stopped.id), await f.state(running.id)]).toEqual(['running', 'stopped']);

      const busy = await f.hostOf(running.id);
      const refused = await f.hosts(['remove', busy as string]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`host ${busy} still holds 1 computers`);
      const removed = await f.hosts(['remove', 'e1']);
      expect(removed, removed.stderr).toMatchObject({ code: 0, stdout: 'Removed host e1.\n' });
      const listed = JSON.parse((await f.hosts(['list', '--json'])).stdout);
      expect(listed.map((h: { name: string }) => h.name)).toEqual(['e2', 'e3']);
    }, 90_000);
  });

  describePostgres('SVC_DRIVER=docker, two replicas placing at once', (db) => {
    let f: Fleet;
    let two: App;
    // Four computers in all: 2 + 1 + 1.
    const caps = { e1: 2, e2: 1, e3: 1 } as const;
    beforeAll(async () => {
      f = await openFleet(db, [
        ['e1', capacity(64, 65536, caps.e1), 'a'],
        ['e2', capacity(64, 65536, caps.e2), 'b'],
        ['e3', capacity(64, 65536, caps.e3), 'c'],
      ]);
      const config = loadConfig(
        { SVC_BASE_URL: `${ORIGIN}/v1`, SVC_RATE_LIMITS: 'off', ...f.env },
        { sandbox: true },
      );
      two = await createApp({ config, db: await db.replica(f.t.db), responseValidation: 'throw' });
      await two.start();
      await (two.deps.driver as FleetDriver).heartbeat();
    }, 60_000);
    afterAll(async () => {
      await two?.close();
      await f?.t.close();
    });

    test('many concurrent creates through two replicas: exactly the capacity succeeds, no host is overfilled', async () => {
      showLogsOnFailure();
      const other = await f.t.team();
      const attempts = Array.from({ length: 16 }, (_, i) => {
        const app = i % 2 === 0 ? f.t.app : two;
        const team = i % 4 < 2 ? f.team : other;
        return app.fetch(
          new Request(`${ORIGIN}/v1/workspaces/${team.workspace.id}/computers`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${team.editor.token}`,
              'content-type': 'application/json',
              'idempotency-key': newId(),
            },
            body: JSON.stringify({ name: unique('race'), size: 'small', image: 'busybox' }),
          }),
        );
      });
      const answers = await Promise.all(
        attempts.map(async (p) => {
          const response = await p;
          return { status: response.status, body: await response.json() };
        }),
      );
      // Every refusal is no_capacity (not a lock wait that ran out, say), named in the failure if not.
      const outcomes = answers.map((a) =>
        a.status === 202
          ? 'created'
          : `${a.status} ${a.body.error?.details?.reason} ${a.body.error?.message}`,
      );
      const refusal = '503 no_capacity no host has room for a computer of size small now; retry later';
      expect(outcomes.sort()).toEqual([...Array(4).fill('created'), ...Array(12).fill(refusal)].sort());
      for (const answer of answers.filter((a) => a.status === 503))
        expect(answer.body.error).toMatchObject({
          code: 'unavailable',
          details: { resource: 'computers' },
        });
      const { rows } = await f.t.db.query<{ name: string; n: number; capacity: number }>(
        `SELECT h.name, h.capacity_computers AS capacity,
                  (SELECT count(*) FROM computers c WHERE c.host_id = h.id AND c.deleted_at IS NULL)::integer AS n
             FROM hosts h ORDER BY h.name`,
      );
      expect(rows.map((r) => [r.name, r.n])).toEqual([
        ['e1', 2],
        ['e2', 1],
        ['e3', 1],
      ]);
      const all = await f.t.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM computers');
      expect(all.rows[0]?.n).toBe(4);
      // Each of the four runs, on its own host's Engine.
      for (const answer of answers.filter((a) => a.status === 202)) {
        const id = answer.body.computer.id as string;
        const operation = answer.body.operations[0].id as string;
        const team = answer.body.computer.workspace_id === other.workspace.id ? other : f.team;
        const done = await f.t.call('GET', `/v1/operations/${operation}?wait=30`, {
          token: team.editor.token,
        });
        expect(done.body.operation.state).toBe('succeeded');
        expect(await f.enginesOf(id)).toEqual([await f.hostOf(id)]);
      }
    }, 90_000);
  });
});
