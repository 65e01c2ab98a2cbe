import { expect, test } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { newId } from '../../src/ids.js';
import { lastWorkspaceEventSequence, workspaceEventsAfter } from '../../src/repositories/events.js';
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

  test('a storm of 200 PATCHes of computers in one workspace: every one answered, one event each (figures printed)', async () => {
    const t = await openTestApp(engine, { env: { SVC_RATE_LIMITS: 'off', SVC_READ_CACHE: 'off' } });
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
            return answer.status;
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
      expect(logged.statuses.every((status) => status === 200)).toBe(true);
      const events = await workspaceEventsAfter(t.db, workspaceId, before, 1000);
      expect(events.map((event) => event.sequence)).toEqual(ids.map((_, i) => before + 1 + i));
      expect(events.every((event) => event.type === 'computer.updated')).toBe(true);
      // The same storm with the computers' event trigger off, in the same run, for the ratio.
      await t.db.query('ALTER TABLE computers DISABLE TRIGGER computers_event_update');
      const unlogged = await storm('unlogged');
      await t.db.query('ALTER TABLE computers ENABLE TRIGGER computers_event_update');
      expect(unlogged.statuses.every((status) => status === 200)).toBe(true);
      console.log(
        `storm: 200 concurrent PATCHes in one workspace (pool 10): with the event log ${logged.totalMs} ms ` +
          `(p50 ${logged.p50Ms} ms, max ${logged.maxMs} ms); without it ${unlogged.totalMs} ms ` +
          `(p50 ${unlogged.p50Ms} ms, max ${unlogged.maxMs} ms)`,
      );
    } finally {
      await t.close();
    }
  });
});
