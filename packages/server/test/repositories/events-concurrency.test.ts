import { expect, test } from 'vitest';
import { lastWorkspaceEventSequence, workspaceEventsAfter } from '../../src/computers/repositories/events.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { openTestApp } from '../support/app.js';
import { describePostgres } from '../support/databases.js';
import { createWorkspace } from '../support/fixtures.js';

// The order of a workspace's log under concurrent writers (migration 013): sequences are taken at the
// commit, one writer of a workspace at a time, so they are gapless and commit in order, across
// replicas; a reader that reads on from the last sequence it saw never misses one.

async function computers(db: Database, workspaceId: string, userId: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId());
  await db.query(
    `INSERT INTO computers (id, workspace_id, name, state, size, image, created_by, started_at)
     SELECT id, $2, 'pc-' || n, 'running', 'small', 'debian-13', $3, now()
       FROM unnest($1::text[]) WITH ORDINALITY AS t (id, n)`,
    [ids, workspaceId, userId],
  );
  return ids;
}

describePostgres('workspace event log under concurrent writers', (engine) => {
  test('two replicas writing one workspace at once: sequences 1..N, no gap, no duplicate, never seen out of order', async () => {
    const one = await engine.open({ poolSize: 10 });
    const two = await engine.replica(one, { poolSize: 10 });
    const { workspaceId, userId } = await createWorkspace(one);
    const ids = await computers(one, workspaceId, userId, 20);
    const base = await lastWorkspaceEventSequence(one, workspaceId);
    const writes = 400;

    // A reader polling as a stream does: from the last sequence it passed, never below it.
    let writing = true;
    const seen: number[] = [];
    const reader = (async () => {
      let last = 0;
      while (writing || last < base + writes) {
        const events = await workspaceEventsAfter(two, workspaceId, last, 500);
        for (const event of events) {
          seen.push(event.sequence);
          last = event.sequence;
        }
        if (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();

    // 16 writers at a time, 8 on each replica (their pools' size): each a transaction of its own.
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, writer) => {
        const db = writer % 2 === 0 ? one : two;
        for (let i = next++; i < writes; i = next++) {
          await db.transaction(async (tx) => {
            const id = ids[i % ids.length] as string;
            await tx.query(`UPDATE computers SET labels = $2, updated_at = now() WHERE id = $1`, [
              id,
              { n: String(i) },
            ]);
            // Some hold their transaction open after the change: the counter is not taken until the commit.
            if (i % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
          });
        }
      }),
    );
    writing = false;
    await reader;

    expect(seen).toEqual(Array.from({ length: base + writes }, (_, i) => i + 1));
    const { rows } = await one.query<{ n: number; distinct_ids: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT id)::int AS distinct_ids FROM workspace_events WHERE workspace_id = $1`,
      [workspaceId],
    );
    expect(rows[0]).toEqual({ n: base + writes, distinct_ids: base + writes });
    const all = await workspaceEventsAfter(one, workspaceId, 0, 10_000);
    const eventIds = all.map((event) => event.data.id);
    expect([...eventIds].sort()).toEqual(eventIds);
  });

  test('changes that hold the workspace’s row (a member’s) beside changes that do not: no deadlock at the commit', async () => {
    const db = await engine.open({ poolSize: 10 });
    const { workspaceId, userId } = await createWorkspace(db);
    const ids = await computers(db, workspaceId, userId, 10);
    const errors: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, writer) => {
        for (let i = 0; i < 25; i++)
          await db
            .transaction(async (tx) => {
              if (writer % 2 === 0) {
                // As a member's change does: the workspace's row first, held to the commit.
                await tx.query('SELECT id FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
                await tx.query('UPDATE members SET updated_at = now() WHERE workspace_id = $1', [
                  workspaceId,
                ]);
              } else {
                await tx.query('UPDATE computers SET labels = $2, updated_at = now() WHERE id = $1', [
                  ids[(writer + i) % ids.length],
                  { i: String(i) },
                ]);
              }
            })
            .catch((error: { code?: string; message?: string }) =>
              errors.push(`${error.code} ${error.message}`),
            );
      }),
    );
    expect(errors).toEqual([]);
    const events = await workspaceEventsAfter(db, workspaceId, 0, 1000);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, i) => i + 1));
  });

  test('transactions writing to two workspaces’ logs in opposite orders: no deadlock', async () => {
    const db = await engine.open({ poolSize: 10 });
    const a = await createWorkspace(db);
    const b = await createWorkspace(db);
    const users = Array.from({ length: 8 }, () => newId());
    for (const id of users) {
      await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [id]);
      for (const ws of [a, b])
        await db.query(
          `INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'viewer')`,
          [newId(), ws.workspaceId, id],
        );
    }
    const errors: string[] = [];
    await Promise.all(
      users.map(async (user, writer) => {
        const order = writer % 2 === 0 ? [a, b] : [b, a];
        for (let i = 0; i < 20; i++)
          await db
            .transaction(async (tx) => {
              for (const ws of order)
                await tx.query(
                  `UPDATE members SET role = $3, updated_at = now() WHERE workspace_id = $1 AND principal_id = $2`,
                  [ws.workspaceId, user, i % 2 === 0 ? 'editor' : 'viewer'],
                );
            })
            .catch((error: { code?: string; message?: string }) =>
              errors.push(`${error.code} ${error.message}`),
            );
      }),
    );
    expect(errors).toEqual([]);
    for (const ws of [a, b]) {
      const events = await workspaceEventsAfter(db, ws.workspaceId, 0, 1000);
      expect(events.map((event) => event.sequence)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((event) => event.type === 'member.updated')).toHaveLength(users.length * 20);
    }
  });

  test('a storm of 200 PATCHes of computers in one workspace: every one answered, one event each (figures printed)', async () => {
    // 200 requests queue for 10 connections: the checkout bound is raised so that a loaded machine's
    // queue is not what the test measures (the counter's lock is bounded by the lock timeout as shipped).
    const t = await openTestApp(engine, {
      env: { SVC_RATE_LIMITS: 'off', SVC_READ_CACHE: 'off' },
      database: { bounds: { checkoutTimeoutMs: 20_000 } },
    });
    try {
      const team = await t.team();
      const workspaceId = team.workspace.id;
      const ids = await computers(t.db, workspaceId, team.owner.id, 200);
      const storm = async (round: string) => {
        const started = performance.now();
        const latencies: number[] = [];
        const statuses = await Promise.all(
          ids.map(async (id) => {
            const at = performance.now();
            const answer = await t.call('PATCH', `/v1/workspaces/${workspaceId}/computers/${id}`, {
              token: team.editor.token,
              body: { labels: { round } },
            });
            latencies.push(performance.now() - at);
            return answer.status === 200
              ? 200
              : `${answer.status} ${JSON.stringify(answer.body?.error?.message)}`;
          }),
        );
        latencies.sort((a, b) => a - b);
        return {
          statuses,
          totalMs: Math.round(performance.now() - started),
          p50Ms: Math.round(latencies[Math.floor(latencies.length / 2)] as number),
          maxMs: Math.round(latencies.at(-1) as number),
        };
      };
      await storm('warm-up');
      const before = await lastWorkspaceEventSequence(t.db, workspaceId);
      const logged = await storm('logged');
      expect(logged.statuses.filter((status) => status !== 200)).toEqual([]);
      const events = await workspaceEventsAfter(t.db, workspaceId, before, 1000);
      expect(events.map((event) => event.sequence)).toEqual(ids.map((_, i) => before + 1 + i));
      expect(events.every((event) => event.type === 'computer.updated')).toBe(true);
      // The figures: the same storm with the computers' event trigger on and off, alternately, in this
      // run (a shared machine's noise is larger than the difference in any one pair).
      const totals: Record<'on' | 'off', number[]> = { on: [logged.totalMs], off: [] };
      for (let round = 0; round < 5; round++) {
        const on = round % 2 === 1;
        if (!on) await t.db.query('ALTER TABLE computers DISABLE TRIGGER computers_event_update');
        const result = await storm(`round-${round}`);
        if (!on) await t.db.query('ALTER TABLE computers ENABLE TRIGGER computers_event_update');
        expect(result.statuses.filter((status) => status !== 200)).toEqual([]);
        totals[on ? 'on' : 'off'].push(result.totalMs);
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
      console.log(
        `storm: 200 concurrent PATCHes in one workspace (pool 10), total ms per storm: with the event log ` +
          `${totals.on.join(', ')} (median ${median(totals.on)}); without it ${totals.off.join(', ')} ` +
          `(median ${median(totals.off)}); first storm with it: p50 ${logged.p50Ms} ms, max ${logged.maxMs} ms`,
      );
    } finally {
      await t.close();
    }
  });
});
