// The webhook endpoints (tag `webhooks`): every operation, with what holds on the mock and the server
// alike (statuses, envelopes, the one-time secret shown by create and rotate only), then what needs a
// server that remembers (statefulIt): read-your-writes of disable and enable, a new secret on rotate, and
// a delivery the server really sends, checked against the spec's `webhooks` entry for its event type
// (support/webhooks.ts). Deliveries go to a receiver of the suite's own (support/receivers.ts): at its
// loopback URL, or at the URL the run names for it. A server that refuses that URL (as shipped, without
// SVC_WEBHOOKS_ALLOW_LOOPBACK) has its endpoints checked on the spec's example URL instead, and the
// checks that need a delivery to arrive are skipped, with the server's answer and what enables them.
// The mock never sends anything.
import { unwrap, waitForOperations } from '@svc/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, excuse, statefulIt, uniqueName } from '../support/harness.js';
import {
  noReceiver,
  RECEIVER_PORT,
  RECEIVER_URL,
  receivers,
  SPEC_RECEIVER_URL,
  urlRefusal,
} from '../support/receivers.js';
import { onMock } from '../support/target.js';
import { type Delivery, deliveryViolations, startReceiver } from '../support/webhooks.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;
const WAIT = { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 };

export function webhooksSuite(): void {
  const client = () => contractClient();
  const hook = { id: '', secret: '', delivery: '' };
  const endpoint = () => ({ workspace: fx.workspace, webhook_endpoint: hook.id });
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

  beforeAll(async () => {
    // On the server, deliveries go to a receiver of this suite's own: at most 16 kept, 30 s per wait.
    if (!onMock) receiver = await startReceiver({ limit: 16, timeoutMs: 30_000, port: RECEIVER_PORT });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('createWebhookEndpoint answers 201 with the endpoint and its one-time secret', async () => {
    const create = (url: string) =>
      client().POST('/workspaces/{workspace}/webhook-endpoints', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: { url, description: 'contract tests', event_types: ['computer.created'] },
      });
    const wanted = receiver ? (RECEIVER_URL ?? receiver.url) : SPEC_RECEIVER_URL;
    let answer = await create(wanted);
    // Refused as the spec says a server refuses a receiver it will not deliver to: the endpoint's
    // operations are checked on the spec's own example URL, and the delivery checks skip, saying why.
    const refusal = receiver && urlRefusal(answer.response.status, answer.error);
    if (refusal) {
      receivers.unusable = noReceiver(wanted, refusal);
      await receiver?.close();
      receiver = undefined;
      answer = await create(SPEC_RECEIVER_URL);
    } else if (receiver) receivers.usable = wanted;
    const { webhook_endpoint } = await unwrap(answer);
    expect(webhook_endpoint.id).toMatch(ID);
    expect(webhook_endpoint.secret).toMatch(SECRET);
    hook.id = webhook_endpoint.id;
    hook.secret = webhook_endpoint.secret;
  });

  it('listWebhookEndpoints and getWebhookEndpoint never show a secret', async () => {
    const list = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints', {
        params: { path: { workspace: fx.workspace } },
      }),
    );
    expect(list.webhook_endpoints.length).toBeGreaterThan(0);
    for (const item of list.webhook_endpoints) expect(item).not.toHaveProperty('secret');
    if (!onMock) expect(list.webhook_endpoints.map((e) => e.id)).toContain(hook.id);
    const { webhook_endpoint } = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}', {
        params: { path: endpoint() },
      }),
    );
    expect(webhook_endpoint).not.toHaveProperty('secret');
  });

  it('updateWebhookEndpoint changes the description', async () => {
    const { webhook_endpoint } = await unwrap(
      client().PATCH('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}', {
        params: { path: endpoint(), header: {} },
        body: { description: 'contract tests, updated' },
      }),
    );
    if (!onMock) expect(webhook_endpoint.description).toBe('contract tests, updated');
  });

  it('disableWebhookEndpoint then enableWebhookEndpoint answer the endpoint', async () => {
    const disabled = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/disable', {
        params: { path: endpoint(), header: {} },
      }),
    );
    const enabled = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/enable', {
        params: { path: endpoint(), header: {} },
      }),
    );
    // The server only: the mock answers each with its example.
    if (!onMock) {
      expect(disabled.webhook_endpoint.status).toBe('disabled');
      expect(enabled.webhook_endpoint.status).toBe('enabled');
    }
  });

  it('rotateWebhookEndpoint answers a new secret, once', async () => {
    const { webhook_endpoint } = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/rotate', {
        params: { path: endpoint(), header: {} },
        body: { overlap_seconds: 60 },
      }),
    );
    expect(webhook_endpoint.secret).toMatch(SECRET);
    if (!onMock) {
      expect(webhook_endpoint.secret).not.toBe(hook.secret);
      expect(webhook_endpoint.secret_expires_at).toBeDefined();
    }
    hook.secret = webhook_endpoint.secret;
  });

  it('testWebhookEndpoint sends a sample event, listed among the deliveries and readable', async () => {
    const { webhook_delivery } = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/test', {
        params: { path: endpoint(), header: {} },
        body: { event_type: 'computer.created' },
      }),
    );
    expect(webhook_delivery.event_type).toBe('computer.created');
    hook.delivery = webhook_delivery.id;
    const list = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries', {
        params: { path: endpoint() },
      }),
    );
    if (!onMock) expect(list.webhook_deliveries.map((d) => d.id)).toContain(hook.delivery);
    const { webhook_delivery: read } = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries/{delivery}', {
        params: { path: { ...endpoint(), delivery: hook.delivery } },
      }),
    );
    expect(read.id).toMatch(ID);
  });

  it('redeliverWebhookDelivery sends the sample delivery again once its attempt has ended', async ({
    skip,
  }) => {
    // A pending delivery cannot be redelivered (409), and one to a receiver the server cannot reach
    // stays pending for its retries (hours as shipped): only a delivery that reached a receiver ends.
    if (!onMock && receivers.unusable) {
      excuse('redeliverWebhookDelivery', receivers.unusable);
      skip(receivers.unusable);
    }
    const path = { ...endpoint(), delivery: hook.delivery };
    const read = () =>
      unwrap(
        client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries/{delivery}', {
          params: { path },
        }),
      );
    // On the server, wait (at most 20 s) for its attempt.
    let { status } = (await read()).webhook_delivery;
    for (let tries = 0; !onMock && status === 'pending' && tries < 200; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await read()).webhook_delivery.status;
    }
    await unwrap(
      client().POST(
        '/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries/{delivery}/redeliver',
        { params: { path, header: {} } },
      ),
    );
  });

  statefulIt(
    'a computer created is delivered to the endpoint as the spec says: payload, headers, a signature that verifies',
    async ({ skip }) => {
      if (receiver === undefined) skip(receivers.unusable ?? 'no webhook receiver');
      const name = uniqueName('hooked');
      const created = await unwrap(
        client().POST('/workspaces/{workspace}/computers', {
          params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
          body: { name, size: fx.size, image: fx.image },
        }),
      );
      const real = (d: Delivery) =>
        d.headers['svc-webhook-test'] === undefined && d.body.includes(created.computer.id);
      const [delivery] = await (receiver as NonNullable<typeof receiver>).waitFor(1, real);
      expect(deliveryViolations(delivery as Delivery, hook.secret)).toEqual([]);
      expect(JSON.parse(String(delivery?.body))).toMatchObject({
        type: 'computer.created',
        workspace_id: created.computer.workspace_id,
        computer: { id: created.computer.id, name },
      });
      // The sample events (test, redeliver) are deliveries the spec describes too.
      const samples = await (receiver as NonNullable<typeof receiver>).waitFor(
        1,
        (d) => d.headers['svc-webhook-test'] === 'true',
      );
      for (const sample of samples) expect(deliveryViolations(sample, hook.secret)).toEqual([]);
      await waitForOperations(client(), created.operations, WAIT);
      const { operations } = await unwrap(
        client().DELETE('/workspaces/{workspace}/computers/{computer}', {
          params: { path: { workspace: fx.workspace, computer: name }, header: {} },
        }),
      );
      await waitForOperations(client(), operations, WAIT);
    },
    90_000,
  );

  it('deleteWebhookEndpoint answers 204', async () => {
    const { response } = await client().DELETE(
      '/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}',
      {
        params: { path: endpoint(), header: {} },
      },
    );
    expect(response.status).toBe(204);
  });
}
