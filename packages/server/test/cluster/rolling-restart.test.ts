// A rolling restart of two replicas on one PostgreSQL database under a bounded load on 127.0.0.1:
// every replica is replaced (a new one starts and turns ready, then the old one gets SIGTERM), and no
// request and no operation is lost. The test plays the load balancer: it sends only to replicas whose
// `GET /ready` answered 200 at its last poll (every 100 ms), and never retries a failed request.
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describePostgres } from '../support/databases.js';
import {
  accessToken,
  type ClusterDatabase,
  call,
  createClusterDatabase,
  newKey,
  type Replica,
  startReplica,
  stopReplica,
  tempDir,
} from './processes.js';

const probe = inject('postgres');

/** Replicas in rotation, as a balancer sees them through `/ready`. */
class Balancer {
  readonly members = new Map<Replica, { ready: boolean; sawDraining: boolean }>();
  private next = 0;
  private timer: NodeJS.Timeout | undefined;

  add(replica: Replica): void {
    this.members.set(replica, { ready: false, sawDraining: false });
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), 100);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async poll(): Promise<void> {
    await Promise.all(
      [...this.members].map(async ([replica, state]) => {
        try {
          const res = await fetch(`${replica.url.replace(/\/v1$/, '')}/ready`);
          const body = (await res.json()) as { status: string };
          state.ready = res.status === 200;
          if (body.status === 'draining') state.sawDraining = true;
        } catch {
          state.ready = false; // gone
        }
      }),
    );
  }

  async waitReady(replica: Replica): Promise<void> {
    for (let i = 0; i < 200 && !this.members.get(replica)?.ready; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(this.members.get(replica)?.ready, `${replica.name} never turned ready`).toBe(true);
  }

  pick(): Replica {
    const ready = [...this.members].filter(([, s]) => s.ready).map(([r]) => r);
    if (ready.length === 0) throw new Error('no replica is ready');
    return ready[this.next++ % ready.length] as Replica;
  }
}

/** A GET through node:http, to read `Connection` (fetch hides hop-by-hop headers). */
function rawGet(url: string): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

describePostgres('rolling restart', () => {
  const env = {
    SVC_SIM_STEP_MS: '150',
    SVC_DRAIN_DELAY_MS: '600',
    SVC_SHUTDOWN_TIMEOUT_MS: '15000',
    SVC_METRICS_PORT: '0',
    SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '10000',
    SVC_OPERATION_CONCURRENCY: '16',
  };
  let db: ClusterDatabase;
  let dir: ReturnType<typeof tempDir>;
  let keyFile: string;
  const started: Replica[] = [];
  const start = async (name: string) => {
    const replica = await startReplica(name, { databaseUrl: db.url, keyFile, env });
    started.push(replica);
    return replica;
  };
  /**
   * The metrics address a replica logged with its start-up lines. The log is written asynchronously,
   * so the line may come after the plain "listening" line: it is awaited, for 10 s at most.
   */
  const metricsUrlOf = async (name: string): Promise<string | undefined> => {
    const replica = started.find((r) => r.name === name);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const url = /metrics on (http:\/\/[^\s"]+)/.exec(replica?.startup() ?? '')?.[1];
      if (url || Date.now() > deadline) return url;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    db = await createClusterDatabase(probe.url);
    dir = tempDir();
    keyFile = join(dir.path, 'bootstrap-key.json');
  });
  afterAll(async () => {
    await Promise.all(started.map((r) => stopReplica(r, 'SIGKILL')));
    await db?.drop();
    dir?.remove();
  });

  it('replacing both replicas under load loses no request and no operation', async () => {
    const balancer = new Balancer();
    const a = await start('a');
    const b = await start('b');
    for (const replica of [a, b]) balancer.add(replica);
    balancer.start();
    await balancer.waitReady(a);
    await balancer.waitReady(b);
    const token = await accessToken(a, keyFile);
    const workspace = await call(a, token, 'POST', '/workspaces', {
      key: newKey(),
      body: { name: `rolling-${Date.now().toString(36)}` },
    });
    expect(workspace.status, workspace.text).toBe(201);
    const workspaceId = (workspace.body.workspace as { id: string }).id;

    // The load: 4 clients, each a create (POST, 202) then two reads, until the restart is done; bounded.
    const failures: string[] = [];
    const operations: string[] = [];
    let sent = 0;
    // Creates are bounded so that the workers can finish every operation within the deadline below,
    // however fast the API accepts them; reads go on until the restart is done (bounded far above what
    // the few seconds of a restart take: reads served from the read cache once ran out of a bound of
    // 4,000 before the last replica joined).
    let creates = 0;
    let running = true;
    const client = async (n: number) => {
      for (let i = 0; running && sent < 100_000; i++) {
        const create = i % 3 === 0 && creates++ < 300;
        sent++;
        let replica: Replica | undefined;
        try {
          replica = balancer.pick();
          const answer = create
            ? await call(replica, token, 'POST', `/workspaces/${workspaceId}/computers`, {
                key: newKey(),
                body: { name: `c${n}-${i}`, size: 'small', image: 'ubuntu-2404' },
              })
            : await call(
                replica,
                token,
                'GET',
                i % 3 === 1 ? '/me' : `/workspaces/${workspaceId}/computers?limit=5`,
              );
          if (answer.status !== (create ? 202 : 200))
            failures.push(`${replica.name} ${answer.status} ${answer.text.slice(0, 200)}`);
          else if (create) operations.push((answer.body.operations as { id: string }[])[0]?.id as string);
        } catch (error) {
          failures.push(
            `${replica?.name ?? 'none'}: ${(error as Error).message} ${String((error as Error).cause ?? '')}`,
          );
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));

    // Replace a, then b: the new replica turns ready first, then the old one drains and exits.
    const drained: { name: string; connection: string | undefined; exit: number | null }[] = [];
    for (const [old, name] of [
      [a, 'c'],
      [b, 'd'],
    ] as const) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const fresh = await start(name);
      balancer.add(fresh);
      await balancer.waitReady(fresh);
      const exited = new Promise<number | null>((resolve) => old.child.once('exit', resolve));
      old.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 150));
      const during = await rawGet(`${old.url}/health`);
      expect(during.status).toBe(200); // still serving while balancers notice
      drained.push({ name: old.name, connection: during.connection, exit: await exited });
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    running = false;
    await load;
    balancer.stop();

    expect(failures, failures.slice(0, 5).join('\n')).toEqual([]);
    for (const d of drained) expect(d).toMatchObject({ connection: 'close', exit: 0 });
    expect(balancer.members.get(a)?.sawDraining).toBe(true);
    expect(balancer.members.get(b)?.sawDraining).toBe(true);
    expect(operations.length).toBeGreaterThan(10);

    // Every operation accepted anywhere ends, once, successfully, on whichever replica ran it.
    const deadline = Date.now() + 60_000;
    let rows: { id: string; state: string; attempts: number }[] = [];
    for (;;) {
      rows = (
        await db.pool.query<{ id: string; state: string; attempts: number }>(
          'SELECT id, state, attempts FROM operations WHERE workspace_id = $1',
          [workspaceId],
        )
      ).rows;
      if (rows.every((r) => r.state === 'succeeded' || r.state === 'failed') || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(rows.map((r) => r.id).sort()).toEqual([...operations].sort());
    expect(rows.filter((r) => r.state !== 'succeeded')).toEqual([]);

    // The survivors' metrics saw the load.
    const metricsUrl = await metricsUrlOf('d');
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const text = await (await fetch(metricsUrl as string)).text();
    // d came last, after the bounded creates: it served reads.
    expect(text).toMatch(/^svc_http_requests_total\{operation="listComputers",status="200"\} \d+$/m);
    expect(text).toMatch(/^svc_db_pool_connections\{state="max"\} 10$/m);
    process.stdout.write(
      `rolling restart: ${sent} requests over 4 replicas (2 replaced), ${operations.length} operations, ` +
        `${rows.filter((r) => r.attempts > 1).length} taken over, 0 lost\n`,
    );
  }, 120_000);
});
