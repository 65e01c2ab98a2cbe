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

  it('the other replica delivers the event once the lease expires', async () => {
    const keyFile = join(dir.path, 'bootstrap-key.json');
    const first = await startReplica('first', { databaseUrl: db.url, keyFile, env });
    replicas.push(first);
    const token = await accessToken(first, keyFile);
    const created = await call(first, token, 'POST', '/workspaces', {
      key: newKey(),
      body: { name: `hooks-${Date.now().toString(36)}` },
    });
    expect(created.status, created.text).toBe(201);
    const workspaceId = (created.body.workspace as { id: string }).id;
    receiver.answer('/killed', 'hang');
    const endpoint = await call(first, token, 'POST', `/workspaces/${workspaceId}/webhook-endpoints`, {
      key: newKey(),
      body: { url: receiver.url('/killed'), event_types: ['workspace.updated'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const { id, secret } = endpoint.body.webhook_endpoint as { id: string; secret: string };
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
    const deadline = Date.now() + 10_000;
    for (;;) {
      const list = await call(
        second,
        token,
        'GET',
        `/workspaces/${workspaceId}/webhook-endpoints/${id}/deliveries`,
      );
      const [delivery] = list.body.webhook_deliveries as { status: string; attempt_count: number }[];
      if (delivery?.status === 'succeeded') {
        // The killed attempt was never recorded; the takeover's was.
        expect(delivery.attempt_count).toBe(1);
        break;
      }
      if (Date.now() > deadline) throw new Error(`not delivered: ${JSON.stringify(list.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120_000);

  it('a replica alive but slower than the lease keeps it (renewed): one attempt, never two at once', async () => {
    const keyFile = join(dir.path, 'bootstrap-key.json');
    const a = await startReplica('slow-a', { databaseUrl: db.url, keyFile, env });
    replicas.push(a);
    const b = await startReplica('slow-b', { databaseUrl: db.url, keyFile, env });
    replicas.push(b);
    const token = await accessToken(a, keyFile);
    const created = await call(a, token, 'POST', '/workspaces', {
      key: newKey(),
      body: { name: `slow-${Date.now().toString(36)}` },
    });
    expect(created.status, created.text).toBe(201);
    const workspaceId = (created.body.workspace as { id: string }).id;
    // Answered after 5 s: two and a half leases of 2 s, well within an attempt's 15 s.
    receiver.answer('/slow', { status: 204, afterMs: 5_000 });
    const endpoint = await call(a, token, 'POST', `/workspaces/${workspaceId}/webhook-endpoints`, {
      key: newKey(),
      body: { url: receiver.url('/slow'), event_types: ['workspace.updated'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const { id } = endpoint.body.webhook_endpoint as { id: string };
    const touched = await call(b, token, 'PATCH', `/workspaces/${workspaceId}`, {
      body: { display_name: 'slow receiver' },
    });
    expect(touched.status, touched.text).toBe(200);
    await receiver.waitFor('/slow', 1, 30_000);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const list = await call(
        a,
        token,
        'GET',
        `/workspaces/${workspaceId}/webhook-endpoints/${id}/deliveries`,
      );
      const [delivery] = list.body.webhook_deliveries as { status: string; attempt_count: number }[];
      if (delivery?.status === 'succeeded') {
        expect(delivery.attempt_count).toBe(1);
        break;
      }
      if (Date.now() > deadline) throw new Error(`not delivered: ${JSON.stringify(list.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Neither replica sent it again meanwhile (both poll every 100 ms, and the lease is 2 s).
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.received('/slow')).toHaveLength(1);
  }, 120_000);
});
