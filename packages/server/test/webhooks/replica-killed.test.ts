// A replica killed (SIGKILL) in the middle of an attempt: its lease on the delivery expires and the
// other replica delivers it (at least once, never lost). Two real server processes (dist/main.js) on
// one PostgreSQL database; the receiver, on 127.0.0.1, hangs the first request until the kill.
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
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
} from '../cluster/processes.js';
import { describePostgres } from '../support/databases.js';
import { startReceiver } from './receiver.js';

const probe = inject('postgres');

describePostgres('webhooks: a replica killed mid-attempt', () => {
  const env = {
    SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true',
    SVC_WEBHOOK_LEASE_MS: '2000',
    SVC_WEBHOOK_POLL_MS: '100',
    LOG_LEVEL: 'error',
  };
  let db: ClusterDatabase;
  let dir: ReturnType<typeof tempDir>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const replicas: Replica[] = [];
  beforeAll(async () => {
    db = await createClusterDatabase(probe.url);
    dir = tempDir();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => stopReplica(r, 'SIGKILL')));
    await receiver?.close();
    await db?.drop();
    dir?.remove();
  });

  /** A new workspace with an endpoint for `workspace.updated` at the receiver's `path`. */
  async function workspaceWithEndpoint(replica: Replica, token: string, path: string) {
    const created = await call(replica, token, 'POST', '/workspaces', {
      key: newKey(),
      body: { name: `hooks-${Date.now().toString(36)}` },
    });
    expect(created.status, created.text).toBe(201);
    const workspaceId = (created.body.workspace as { id: string }).id;
    const endpoint = await call(replica, token, 'POST', `/workspaces/${workspaceId}/webhook-endpoints`, {
      key: newKey(),
      body: { url: receiver.url(path), event_types: ['workspace.updated'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    return { workspaceId, ...(endpoint.body.webhook_endpoint as { id: string; secret: string }) };
  }

  /** The endpoint's one delivery once it has succeeded, read at `replica` (fails after `timeoutMs`). */
  async function succeeded(
    replica: Replica,
    token: string,
    workspaceId: string,
    id: string,
    timeoutMs: number,
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const list = await call(
        replica,
        token,
        'GET',
        `/workspaces/${workspaceId}/webhook-endpoints/${id}/deliveries`,
      );
      const [delivery] = list.body.webhook_deliveries as { status: string; attempt_count: number }[];
      if (delivery?.status === 'succeeded') return delivery;
      if (Date.now() > deadline) throw new Error(`not delivered: ${JSON.stringify(list.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('the other replica delivers the event once the lease expires', async () => {
    const keyFile = join(dir.path, 'bootstrap-key.json');
    const first = await startReplica('first', { databaseUrl: db.url, keyFile, env });
    replicas.push(first);
    const token = await accessToken(first, keyFile);
    receiver.answer('/killed', 'hang');
    const { workspaceId, id, secret } = await workspaceWithEndpoint(first, token, '/killed');
    // Only the first replica runs now, so it takes the attempt; the receiver holds it.
    const touched = await call(first, token, 'PATCH', `/workspaces/${workspaceId}`, {
      body: { display_name: 'before the kill' },
    });
    expect(touched.status, touched.text).toBe(200);
    await receiver.waitFor('/killed', 1, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${first.output()}`);
    });
    // The held request stays held; the next one is answered. The kill comes before the second replica
    // starts: started first, it could take the expired lease (2 s) while the receiver still held every
    // request, and that attempt would hang past the deadline below (CI saw it under load).
    receiver.answer('/killed', 204);
    await stopReplica(first, 'SIGKILL');
    const second = await startReplica('second', { databaseUrl: db.url, keyFile, env });
    replicas.push(second);
    const [, retried] = await receiver.waitFor('/killed', 2, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${second.output()}`);
    });
    if (!retried) throw new Error('not retried');
    expect(new Webhook(secret).verify(retried.body, retried.headers as Record<string, string>)).toMatchObject(
      {
        type: 'workspace.updated',
      },
    );
    // The killed attempt was never recorded; the takeover's was.
    expect((await succeeded(second, token, workspaceId, id, 10_000)).attempt_count).toBe(1);
  }, 120_000);

  it('a replica alive but slower than the lease keeps it (renewed): one attempt, never two at once', async () => {
    const keyFile = join(dir.path, 'bootstrap-key.json');
    const a = await startReplica('slow-a', { databaseUrl: db.url, keyFile, env });
    replicas.push(a);
    const b = await startReplica('slow-b', { databaseUrl: db.url, keyFile, env });
    replicas.push(b);
    const token = await accessToken(a, keyFile);
    // Answered after 5 s: two and a half leases of 2 s, well within an attempt's 15 s.
    receiver.answer('/slow', { status: 204, afterMs: 5_000 });
    const { workspaceId, id } = await workspaceWithEndpoint(a, token, '/slow');
    const touched = await call(b, token, 'PATCH', `/workspaces/${workspaceId}`, {
      body: { display_name: 'slow receiver' },
    });
    expect(touched.status, touched.text).toBe(200);
    await receiver.waitFor('/slow', 1, 30_000);
    expect((await succeeded(a, token, workspaceId, id, 20_000)).attempt_count).toBe(1);
    // Neither replica sent it again meanwhile (both poll every 100 ms, and the lease is 2 s).
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.received('/slow')).toHaveLength(1);
  }, 120_000);
});
