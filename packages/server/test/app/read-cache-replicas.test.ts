// The computers' read cache across replicas: two server instances (each its own pool and listening
// connection) on one throwaway PostgreSQL database. A read served from a replica's cache is never
// older than the database: whatever another replica — or any writer in SQL — committed before the
// read began is seen by it, with no wait in the test. A replica that cannot hear notifications reads
// the database instead.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type App, createApp } from '../../src/compose/app.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';
import { callReplica as call, replicaConfig as config } from '../support/replicas.js';

describePostgres('computers read cache on two replicas', (engine) => {
  let one: App;
  let two: App;
  let deaf: App;
  let writer: Database;
  let token: string;
  let ws: string;
  let computer: string;
  beforeAll(async () => {
    const first = await engine.open();
    const second = await engine.replica(first);
    const third = await engine.replica(first);
    writer = await engine.replica(first);
    one = await createApp({ config, db: first, responseValidation: 'throw' });
    two = await createApp({ config, db: second, responseValidation: 'throw' });
    // A replica whose notifications never arrive: its barrier fails, so it must read the database.
    deaf = await createApp({
      config,
      db: {
        ...third,
        listen: async () => async () => {},
        notificationBarrier: () => Promise.reject(new Error('not listening')),
      },
      responseValidation: 'throw',
    });
    await one.start();
    const ownerId = newId();
    await first.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [
      ownerId,
      unique('o'),
    ]);
    token = (await one.deps.tokens.issue(ownerId)).access_token;
    const created = await call(one, 'POST', '/v1/workspaces', token, { name: unique('ws') });
    expect(created.status).toBe(201);
    ws = `/v1/workspaces/${created.body.workspace.id}`;
    const box = await call(one, 'POST', `${ws}/computers`, token, {
      name: unique('box'),
      size: 'small',
      image: 'ubuntu-2404',
    });
    expect(box.status).toBe(202);
    computer = box.body.computer.id;
    const settled = await call(one, 'GET', `/v1/operations/${box.body.operations[0].id}?wait=10`, token);
    expect(settled.body.operation.state).toBe('succeeded');
  });
  afterAll(async () => {
    for (const app of [one, two, deaf]) await app?.close();
  });

  test('a rename on one replica is seen by the very next read on the other, every time', async () => {
    const path = `${ws}/computers/${computer}`;
    for (let round = 0; round < 20; round++) {
      // Cached on replica two (read twice: the second is a hit).
      await call(two, 'GET', path, token);
      await call(two, 'GET', `${ws}/computers`, token);
      const name = unique(`r${round}`);
      const renamed = await call(one, 'PATCH', path, token, { name });
      expect(renamed.status).toBe(200);
      expect((await call(two, 'GET', path, token)).body.computer.name).toBe(name);
      const page = await call(two, 'GET', `${ws}/computers`, token);
      expect(page.body.computers.map((c: { name: string }) => c.name)).toContain(name);
    }
  });

  test('a change written straight in SQL by another connection is seen by the next read', async () => {
    const path = `${ws}/computers/${computer}`;
    for (const value of ['a', 'b', 'c']) {
      await call(two, 'GET', path, token);
      await writer.query(`UPDATE computers SET labels = jsonb_build_object('v', $2::text) WHERE id = $1`, [
        computer,
        value,
      ]);
      expect((await call(two, 'GET', path, token)).body.computer.labels).toEqual({ v: value });
    }
  });

  test("a create and a delete on one replica show in the other replica's list at once", async () => {
    const list = `${ws}/computers`;
    await call(two, 'GET', list, token);
    const box = await call(one, 'POST', list, token, {
      name: unique('new'),
      size: 'small',
      image: 'ubuntu-2404',
    });
    expect(box.status).toBe(202);
    const ids = (await call(two, 'GET', list, token)).body.computers.map((c: { id: string }) => c.id);
    expect(ids).toContain(box.body.computer.id);
    const settled = await call(one, 'GET', `/v1/operations/${box.body.operations[0].id}?wait=10`, token);
    expect(settled.body.operation.state).toBe('succeeded');
    await call(two, 'GET', `${list}/${box.body.computer.id}`, token);
    const deleted = await call(one, 'DELETE', `${list}/${box.body.computer.id}`, token);
    expect(deleted.status).toBe(202);
    const state = (await call(two, 'GET', `${list}/${box.body.computer.id}`, token)).body.computer.state;
    expect(['deleting', 'deleted']).toContain(state);
  });

  test('a change of one computer reaches every page that can show it, filtered or not, and its reads by name', async () => {
    const list = `${ws}/computers`;
    const boxes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const box = await call(one, 'POST', list, token, {
        name: unique(`pg${i}`),
        size: 'small',
        image: 'ubuntu-2404',
      });
      expect(box.status).toBe(202);
      boxes.push(box.body.computer.id);
      // Settled, so that only the test changes them from here on.
      const settled = await call(one, 'GET', `/v1/operations/${box.body.operations[0].id}?wait=10`, token);
      expect(settled.body.operation.state).toBe('succeeded');
    }
    /** Every page of a listing (2 a page), as `app` answers it, byte for byte. */
    const pages = async (app: App, query: string) => {
      const all: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call(
          app,
          'GET',
          `${list}?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`,
          token,
        );
        expect(res.status).toBe(200);
        // The cached replica answers the bytes it kept for a page; the deaf one renders every time.
        all.push(res.text);
        cursor = res.body.next_cursor;
      } while (cursor);
      return all;
    };
    const queries = ['', '&state=stopped', '&label=tier%3Dgold'];
    for (const [round, id] of boxes.entries()) {
      // Replica two holds every page and the computer read by its name.
      for (const query of queries) await pages(two, query);
      const name = (await call(two, 'GET', `${list}/${id}`, token)).body.computer.name;
      expect((await call(two, 'GET', `${list}/${name}`, token)).status).toBe(200);
      // One change moves the computer into the filtered pages and renames it, in SQL.
      await writer.query(
        `UPDATE computers SET state = 'stopped', name = $2, labels = '{"tier":"gold"}'::jsonb WHERE id = $1`,
        [id, unique(`moved${round}`)],
      );
      // The deaf replica reads the database every time: the truth to compare with.
      for (const query of queries) expect(await pages(two, query)).toEqual(await pages(deaf, query));
      expect((await call(two, 'GET', `${list}/${name}`, token)).status).toBe(404);
    }
  });

  test('reads racing writes never answer older than what was committed before they began', async () => {
    const list = `${ws}/computers`;
    const path = `${list}/${computer}`;
    let committed = 0;
    let writing = true;
    const writes = (async () => {
      for (let n = 1; n <= 100; n++) {
        await writer.query(`UPDATE computers SET labels = jsonb_build_object('n', $2::text) WHERE id = $1`, [
          computer,
          String(n),
        ]);
        committed = n;
      }
      writing = false;
    })();
    /** Reads on the caching replica until the writes end; each answer is at least what was committed before it began. */
    const reader = async () => {
      let reads = 0;
      while (writing) {
        const floor = committed;
        const [page, one] = await Promise.all([call(two, 'GET', list, token), call(two, 'GET', path, token)]);
        const listed = page.body.computers.find((c: { id: string }) => c.id === computer);
        expect(Number(listed.labels.n ?? 0)).toBeGreaterThanOrEqual(floor);
        expect(Number(one.body.computer.labels.n ?? 0)).toBeGreaterThanOrEqual(floor);
        reads++;
      }
      return reads;
    };
    const reads = await Promise.all([writes, ...Array.from({ length: 8 }, reader)]);
    expect(reads.slice(1).every((n) => (n ?? 0) > 0)).toBe(true);
  });

  test('a replica that cannot hear notifications reads the database, never its cache', async () => {
    const path = `${ws}/computers/${computer}`;
    for (const value of ['x', 'y']) {
      await call(deaf, 'GET', path, token);
      await writer.query(`UPDATE computers SET labels = jsonb_build_object('v', $2::text) WHERE id = $1`, [
        computer,
        value,
      ]);
      expect((await call(deaf, 'GET', path, token)).body.computer.labels).toEqual({ v: value });
    }
  });
});
