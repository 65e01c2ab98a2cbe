import { unwrap } from '@svc/client';
import { expect, it } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, statefulIt } from '../support/harness.js';
import { onMock } from '../support/target.js';

const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;
/** No receiver answers here (the server target resolves no names): deliveries fail, as a test may want. */
const URL_NOWHERE = 'https://hooks.example.com/contract';

/**
 * Webhook endpoints and their deliveries. On a server the sample delivery fails (no receiver), the
 * schedule the target sets (`SVC_WEBHOOK_RETRY_SCHEDULE=0`) ends it quickly, and then it can be
 * redelivered; against the mock each answer is the spec's example.
 */
export function webhooksSuite(): void {
  const client = () => contractClient();
  const ids = { endpoint: '', delivery: '' };
  const path = () => ({ workspace: fx.workspace, webhook_endpoint: ids.endpoint });

  it('createWebhookEndpoint answers 201 with the secret, once; get and list never show it', async () => {
    const { webhook_endpoint } = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: { url: URL_NOWHERE, event_types: ['computer.created', 'computer.deleted'] },
      }),
    );
    expect(webhook_endpoint.id).toMatch(ID);
    expect(webhook_endpoint.secret).toMatch(/^whsec_/);
    ids.endpoint = webhook_endpoint.id;
    const one = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}', {
        params: { path: path() },
      }),
    );
    const list = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints', {
        params: { path: { workspace: fx.workspace } },
      }),
    );
    expect(list.webhook_endpoints.length).toBeGreaterThan(0);
    expect(JSON.stringify([one, list])).not.toContain('whsec_');
  });

  it('updateWebhookEndpoint, disableWebhookEndpoint, enableWebhookEndpoint and rotateWebhookEndpoint', async () => {
    const updated = await unwrap(
      client().PATCH('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}', {
        params: { path: path(), header: {} },
        body: { event_types: ['*'] },
      }),
    );
    expect(updated.webhook_endpoint.id).toMatch(ID);
    const disabled = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/disable', {
        params: { path: path(), header: {} },
      }),
    );
    expect(disabled.webhook_endpoint.status).toBe('disabled');
    const enabled = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/enable', {
        params: { path: path(), header: {} },
      }),
    );
    expect(enabled.webhook_endpoint.status).not.toBe('disabled');
    const rotated = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/rotate', {
        params: { path: path(), header: {} },
        body: { overlap_seconds: 60 },
      }),
    );
    expect(rotated.webhook_endpoint.secret).toMatch(/^whsec_/);
  });

  it('testWebhookEndpoint queues a sample; listWebhookDeliveries and getWebhookDelivery read it', async () => {
    const { webhook_delivery } = await unwrap(
      client().POST('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/test', {
        params: { path: path(), header: {} },
        body: { event_type: 'computer.created' },
      }),
    );
    expect(webhook_delivery.test).toBe(true);
    ids.delivery = webhook_delivery.id;
    const { webhook_deliveries } = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries', {
        params: { path: path() },
      }),
    );
    expect(webhook_deliveries.length).toBeGreaterThan(0);
    // On a server: until the delivery has ended (it cannot reach its receiver). That takes the server's
    // retry schedule: the targets of this repository retry once, at once (SVC_WEBHOOK_RETRY_SCHEDULE=0).
    const deadline = Date.now() + 45_000;
    for (;;) {
      const { webhook_delivery: read } = await unwrap(
        client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries/{delivery}', {
          params: { path: { ...path(), delivery: ids.delivery } },
        }),
      );
      if (onMock || read.status !== 'pending') break;
      if (Date.now() > deadline) throw new Error(`delivery still pending: ${JSON.stringify(read)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 60_000);

  it('redeliverWebhookDelivery queues an ended delivery again', async () => {
    const { webhook_delivery } = await unwrap(
      client().POST(
        '/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries/{delivery}/redeliver',
        { params: { path: { ...path(), delivery: ids.delivery }, header: {} } },
      ),
    );
    expect(webhook_delivery.id).toMatch(ID);
  });

  statefulIt('a sample delivery that reaches no receiver records its attempts', async () => {
    const { webhook_delivery } = await unwrap(
      client().GET('/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/deliveries/{delivery}', {
        params: { path: { ...path(), delivery: ids.delivery } },
      }),
    );
    expect(webhook_delivery.attempt_count).toBeGreaterThan(0);
    expect(webhook_delivery.attempts[0]?.outcome).toBe('connection_error');
  });

  it('deleteWebhookEndpoint answers 204', async () => {
    const { response } = await client().DELETE(
      '/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}',
      {
        params: { path: path(), header: {} },
      },
    );
    expect(response.status).toBe(204);
  });
}
