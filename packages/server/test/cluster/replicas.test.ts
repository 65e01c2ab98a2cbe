// Two real server processes on one PostgreSQL database: idempotency and the operation worker across
// replicas (design §10: "Concurrent requests with one key produce exactly one effect, across server
// replicas too"), and lease takeover after a replica is killed mid-operation.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describePostgres } from '../support/databases.js';
import {
  type Answer,
  accessToken,
  type ClusterDatabase,
  call,
  callSettled,
  createClusterDatabase,
  newKey,
  type Replica,
  startReplica,
  stopReplica,
  tempDir,
} from './processes.js';

const probe = inject('postgres');

interface OperationRecord {
  id: string;
  type: string;
  state: string;
  target_id: string;
  attempts: number;
  claimed_by: string | null;
  progress: number;
}

/** One cluster per describe: a fresh database, a temp dir, replicas stopped (by pid) and dropped after. */
function cluster(env: Record<string, string>) {
  const state = {} as { db: ClusterDatabase; dir: ReturnType<typeof tempDir>; keyFile: string };
  const replicas: Replica[] = [];
  beforeAll(async () => {
    state.db = await createClusterDatabase(probe.url);
    state.dir = tempDir();
    state.keyFile = join(state.dir.path, 'bootstrap-key.json');
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => stopReplica(r, 'SIGKILL')));
    await state.db?.drop();
    state.dir?.remove();
  });
  return {
    state,
    async start(name: string): Promise<Replica> {
      const replica = await startReplica(name, { databaseUrl: state.db.url, keyFile: state.keyFile, env });
      replicas.push(replica);
      return replica;
    },
    async operations(sql: string, params: unknown[]): Promise<OperationRecord[]> {
      return (await state.db.pool.query<OperationRecord>(sql, params)).rows;
    },
    async count(sql: string, params: unknown[]): Promise<number> {
      const { rows } = await state.db.pool.query<{ n: string }>(sql, params);
      return Number(rows[0]?.n);
    },
    /** Polls until every operation of the workspace has ended (the worker is asynchronous). */
    async settle(workspaceId: string, timeoutMs = 30_000): Promise<OperationRecord[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const rows = await this.operations('SELECT * FROM operations WHERE workspace_id = $1 ORDER BY id', [
          workspaceId,
        ]);
        if (rows.every((r) => r.state === 'succeeded' || r.state === 'failed')) return rows;
        if (Date.now() > deadline) throw new Error(`operations still running: ${JSON.stringify(rows)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
  };
}

/** A body with `error.request_id` left out: a replayed error carries the id of the request that got it. */
function withoutRequestId(body: Record<string, unknown>): unknown {
  const error = body.error as Record<string, unknown> | undefined;
  if (!error) return body;
  const { request_id: _, ...rest } = error;
  return { error: rest };
}

const errorCode = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code;

describePostgres('two replicas on one database', () => {
  const c = cluster({ SVC_SIM_STEP_MS: '10', SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '1000' });
  let a: Replica;
  let b: Replica;
  let token: string;
  let workspaceId: string;
  const computers: string[] = [];

  beforeAll(async () => {
    a = await c.start('a'); // bootstraps the empty database and writes the key file
    b = await c.start('b'); // finds it bootstrapped
    token = await accessToken(a, c.state.keyFile);
    const created = await call(b, token, 'POST', '/workspaces', {
      key: newKey(),
      body: { name: `cluster-${Date.now().toString(36)}` },
    });
    expect(created.status, created.text).toBe(201);
    workspaceId = (created.body.workspace as { id: string }).id;
  }, 60_000);

  it('concurrent creates, each key sent twice to each replica: one computer and one operation per key', async () => {
    const keys = Array.from({ length: 12 }, () => newKey());
    const path = `/workspaces/${workspaceId}/computers`;
    const body = (i: number) => ({ name: `box-${i}`, size: 'small', image: 'ubuntu-2404' });
    const sends = keys.flatMap((key, i) =>
      [a, b, a, b].map((replica) => callSettled(replica, token, 'POST', path, { key, body: body(i) })),
    );
    const answers = await Promise.all(sends);
    const inUse = answers.reduce((n, s) => n + s.inUse, 0);

    for (const [i, key] of keys.entries()) {
      const group = answers.slice(i * 4, i * 4 + 4).map((s) => s.answer);
      for (const answer of group) expect(answer.status, `${key}: ${answer.text}`).toBe(202);
      // Exactly one original; the three others are replays of it, with the same body.
      expect(group.filter((g) => !g.replayed)).toHaveLength(1);
      const [original] = group as [Answer];
      for (const answer of group) expect(answer.body).toEqual(original.body);
      computers.push((original.body.computer as { id: string }).id);
    }
    expect(new Set(computers).size).toBe(keys.length);

    // Same key, different request: 422, on either replica, and no new computer.
    const reused = await callSettled(b, token, 'POST', path, { key: keys[0], body: body(99) });
    expect(reused.answer.status).toBe(422);
    expect(errorCode(reused.answer)).toBe('idempotency_key_reused');

    const rows = await c.settle(workspaceId);
    const creates = rows.filter((r) => r.type === 'computer.create');
    expect(await c.count('SELECT count(*) AS n FROM computers WHERE workspace_id = $1', [workspaceId])).toBe(
      keys.length,
    );
    expect(creates.map((r) => r.target_id).sort()).toEqual([...computers].sort());
    // Executed once: every operation claimed once, ended once, successfully.
    for (const r of creates) expect(r).toMatchObject({ state: 'succeeded', attempts: 1, progress: 100 });
    expect(
      await c.count(
        `SELECT count(*) AS n FROM computers WHERE workspace_id = $1 AND state = 'running' AND current_operation_id IS NULL`,
        [workspaceId],
      ),
    ).toBe(keys.length);
    process.stdout.write(
      `cluster creates: ${answers.length} requests over 2 replicas, ${keys.length} computers, ` +
        `${creates.length} operations, ${inUse} answers of 409 idempotency_key_in_use retried\n`,
    );
  }, 60_000);

  it('concurrent stops with the same and different keys on both replicas: one stop per computer', async () => {
    expect(computers.length).toBeGreaterThan(0);
    const groups = await Promise.all(
      computers.map(async (id) => {
        const path = `/workspaces/${workspaceId}/computers/${id}/stop`;
        const [k1, k2] = [newKey(), newKey()];
        const sent = await Promise.all([
          callSettled(a, token, 'POST', path, { key: k1 }),
          callSettled(b, token, 'POST', path, { key: k1 }),
          callSettled(b, token, 'POST', path, { key: k2 }),
          callSettled(a, token, 'POST', path, { key: k2 }),
        ]);
        return { id, answers: sent.map((s) => s.answer) };
      }),
    );
    for (const { id, answers } of groups) {
      const [a1, b1, b2, a2] = answers as [Answer, Answer, Answer, Answer];
      // Each key: one answer, replayed identically by the other replica (a replayed error names its own request).
      for (const [x, y] of [
        [a1, b1],
        [b2, a2],
      ] as const) {
        expect([x.replayed, y.replayed].filter(Boolean), id).toHaveLength(1);
        expect(y.status, id).toBe(x.status);
        expect(withoutRequestId(y.body), id).toEqual(withoutRequestId(x.body));
      }
      // Between the two keys: exactly one stop was accepted; the other met it (409).
      const statuses = [a1.status, b2.status].sort();
      expect(statuses, `${id}: ${a1.text} / ${b2.text}`).toEqual([202, 409]);
      const loser = a1.status === 409 ? a1 : b2;
      expect(['operation_in_progress', 'invalid_state']).toContain(errorCode(loser));
    }
    const rows = await c.settle(workspaceId);
    const stops = rows.filter((r) => r.type === 'computer.stop');
    expect(stops.map((r) => r.target_id).sort()).toEqual([...computers].sort());
    for (const r of stops) expect(r).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(
      await c.count(`SELECT count(*) AS n FROM computers WHERE workspace_id = $1 AND state = 'stopped'`, [
        workspaceId,
      ]),
    ).toBe(computers.length);
    // Nothing lost, nothing doubled: one record per key (creates, stops, the workspace, the 422 is not new).
    expect(
      await c.count(
        `SELECT count(*) AS n FROM idempotency_keys WHERE key LIKE 'cluster-%' AND state = 'done'`,
        [],
      ),
    ).toBe(1 + computers.length + computers.length * 2);
  }, 60_000);
});

describePostgres('a replica killed mid-operation', () => {
  // Slow transitions (a create is 8 steps: ~3.2 s) and a short lease, so a takeover is quick to see.
  const c = cluster({ SVC_SIM_STEP_MS: '400', SVC_OPERATION_LEASE_MS: '1000' });
  let first: Replica;
  let token: string;
  let workspaceId: string;

  beforeAll(async () => {
    first = await c.start('first');
    token = await accessToken(first, c.state.keyFile);
    const created = await call(first, token, 'POST', '/workspaces', {
      key: newKey(),
      body: { name: `takeover-${Date.now().toString(36)}` },
    });
    expect(created.status, created.text).toBe(201);
    workspaceId = (created.body.workspace as { id: string }).id;
  }, 60_000);

  /** Creates a computer and waits until some replica is running its operation, past its first step. */
  async function createAndCatchRunning(via: Replica, name: string) {
    const answer = await call(via, token, 'POST', `/workspaces/${workspaceId}/computers`, {
      key: newKey(),
      body: { name, size: 'small', image: 'ubuntu-2404' },
    });
    expect(answer.status, answer.text).toBe(202);
    const operationId = (answer.body.operations as { id: string }[])[0]!.id;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const [op] = await c.operations('SELECT * FROM operations WHERE id = $1', [operationId]);
      if (op?.state === 'running' && op.progress > 0 && op.claimed_by) return { operationId, op };
      if (Date.now() > deadline) throw new Error(`operation never ran: ${JSON.stringify(op)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async function waitSucceeded(via: Replica, operationId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 6; i++) {
      const answer = await call(via, token, 'GET', `/operations/${operationId}?wait=10`);
      const operation = answer.body.operation as Record<string, unknown>;
      if (operation.state === 'succeeded' || operation.state === 'failed') return operation;
    }
    throw new Error(`operation ${operationId} did not end`);
  }

  const holder = (claimedBy: string | null) => /^[^/]*:(\d+)\//.exec(claimedBy ?? '')?.[1];

  /** Asserts how the operation ended: succeeded once, after `attempts` claims, by `finisher`. */
  async function expectFinishedBy(finisher: Replica, operationId: string, victim: Replica) {
    const ended = await waitSucceeded(finisher, operationId);
    expect(ended).toMatchObject({ state: 'succeeded', progress: 100 });
    const [row] = await c.operations('SELECT * FROM operations WHERE id = $1', [operationId]);
    expect(row?.attempts).toBe(2); // the killed claim, then the takeover
    expect(holder(row!.claimed_by)).toBe(String(finisher.pid));
    expect(holder(row!.claimed_by)).not.toBe(String(victim.pid));
    const computer = await call(
      finisher,
      token,
      'GET',
      `/workspaces/${workspaceId}/computers/${row!.target_id}`,
    );
    expect(computer.body.computer).toMatchObject({ state: 'running' });
    // No second operation was made for the computer, and no second computer.
    expect(await c.count('SELECT count(*) AS n FROM operations WHERE target_id = $1', [row!.target_id])).toBe(
      1,
    );
  }

  let survivor: Replica;

  it('the remaining replica takes the operation over once the lease expires, and finishes it once', async () => {
    const alive = [first, await c.start('second')];
    const { operationId, op } = await createAndCatchRunning(alive[1]!, 'takeover-one');
    const victim = alive.find((r) => String(r.pid) === holder(op.claimed_by));
    expect(victim, `claimed_by ${op.claimed_by}`).toBeDefined();
    await stopReplica(victim!, 'SIGKILL');
    survivor = alive.find((r) => r !== victim)!;
    await expectFinishedBy(survivor, operationId, victim!);
  }, 60_000);

  it('a restarted replica takes over from the only one, killed mid-operation', async () => {
    const { operationId, op } = await createAndCatchRunning(survivor, 'takeover-two');
    expect(holder(op.claimed_by)).toBe(String(survivor.pid));
    await stopReplica(survivor, 'SIGKILL');
    const restarted = await c.start('restarted');
    await expectFinishedBy(restarted, operationId, survivor);
    expect(await c.count('SELECT count(*) AS n FROM computers WHERE workspace_id = $1', [workspaceId])).toBe(
      2,
    );
  }, 60_000);
});
