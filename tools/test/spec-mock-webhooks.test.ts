// `pnpm mock` and the webhooks: the endpoint operations (tag `webhooks`) are JSON, so the front passes
// them to Prism, which answers each with its example, valid against its schema: create and rotate with
// the one-time secret, the reads without it. The `webhooks` section is what the service SENDS: Prism
// serves no route for it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startMock } from '../spec-mock.mjs';

const bundlePath = fileURLToPath(new URL('../../spec/dist/openapi.json', import.meta.url));
// biome-ignore lint/suspicious/noExplicitAny: the bundle is walked as plain JSON
type Json = any;
const bundle: Json = JSON.parse(readFileSync(bundlePath, 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** Every path parameter gets one id (ids fit the name pattern too). */
const ID = '01m6pq3ktz0x1w6a9hfe4c8n2vd';
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

const local = (node: { $ref?: string } | undefined) =>
  node?.$ref
    ? node.$ref
        .slice(2)
        .split('/')
        .reduce((at: Json, key: string) => at?.[key], bundle)
    : node;

/** The endpoint operations, read from the bundle: the JSON operations tagged `webhooks`. */
const operations = Object.entries(bundle.paths).flatMap(([path, item]: [string, Json]) =>
  METHODS.filter((m) => item[m]?.tags?.includes('webhooks')).map((method) => {
    const op = item[method];
    const success = Object.keys(op.responses).find((s) => /^2/.test(s)) ?? '';
    const media = local(op.requestBody)?.content?.['application/json'];
    const example = media?.examples ? Object.values<Json>(media.examples)[0]?.value : undefined;
    const schema = local(op.responses[success])?.content?.['application/json']?.schema;
    // An operation with a body sends its first example, or `{}` (every field optional).
    const body = media === undefined ? undefined : (example ?? {});
    return { id: op.operationId as string, method, path, success: Number(success), body, schema };
  }),
);

describe('pnpm mock: the webhook endpoints', { timeout: 120_000 }, () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ components: bundle.components }, 'bundle');
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${mock.url}${path.replace(/\{[a-z_]+\}/g, ID)}`, {
      method: method.toUpperCase(),
      headers: {
        authorization: 'Bearer anything',
        'idempotency-key': 'mock-webhooks-1',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  beforeAll(async () => {
    mock = await startMock({
      bundle: bundlePath,
      port: await freePort(),
      flags: ['--errors'],
      stdio: 'pipe',
    });
  }, 120_000);
  afterAll(async () => {
    await mock?.stop();
  });

  it('are the twelve JSON operations of the tag', () => {
    expect(operations.map((o) => o.id).sort()).toEqual(
      [
        'createWebhookEndpoint',
        'deleteWebhookEndpoint',
        'disableWebhookEndpoint',
        'enableWebhookEndpoint',
        'getWebhookDelivery',
        'getWebhookEndpoint',
        'listWebhookDeliveries',
        'listWebhookEndpoints',
        'redeliverWebhookDelivery',
        'rotateWebhookEndpoint',
        'testWebhookEndpoint',
        'updateWebhookEndpoint',
      ].sort(),
    );
  });

  it.each(operations)('$id answers its success status, with a body valid against its schema', async (op) => {
    const response = await call(op.method, op.path, op.body);
    expect(response.status, await response.clone().text()).toBe(op.success);
    if (op.schema === undefined) return;
    const validate = ajv.compile({ $ref: `bundle#${String(op.schema.$ref ?? '').slice(1)}` });
    const body = await response.json();
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  });

  it('create answers the example, with the one-time secret and the new endpoint as Location', async () => {
    const create = operations.find((o) => o.id === 'createWebhookEndpoint');
    const response = await call('post', String(create?.path), create?.body);
    const { webhook_endpoint: endpoint } = await response.json();
    expect(endpoint.secret).toMatch(SECRET);
    expect(response.headers.get('location')).toMatch(
      new RegExp(`^/v1/workspaces/[0-9a-z]{27}/webhook-endpoints/${endpoint.id}$`),
    );
  });

  it('rotate answers the new secret; list and get never show one', async () => {
    const rotate = await call(
      'post',
      `/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}/rotate`,
      {},
    );
    expect((await rotate.json()).webhook_endpoint.secret).toMatch(SECRET);
    const list = await (await call('get', '/workspaces/{workspace}/webhook-endpoints')).json();
    expect(list.webhook_endpoints.length).toBeGreaterThan(0);
    for (const endpoint of list.webhook_endpoints) expect(endpoint).not.toHaveProperty('secret');
    const get = await (
      await call('get', '/workspaces/{workspace}/webhook-endpoints/{webhook_endpoint}')
    ).json();
    expect(get.webhook_endpoint).not.toHaveProperty('secret');
  });

  it('refuses a create without Idempotency-Key (Prism: 422; the server says 400 idempotency_key_required)', async () => {
    const response = await fetch(`${mock.url}/workspaces/${ID}/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: 'Bearer anything', 'content-type': 'application/json' },
      body: JSON.stringify(operations.find((o) => o.id === 'createWebhookEndpoint')?.body),
    });
    expect(response.status).toBe(422);
  });

  it('answers 401 without a Bearer', async () => {
    const response = await fetch(`${mock.url}/workspaces/${ID}/webhook-endpoints`);
    expect(response.status).toBe(401);
  });

  it('serves no route for the `webhooks` section (what the service sends, not an API operation)', async () => {
    const response = await call('post', '/computer.created', {});
    expect(response.status).toBe(404);
  });
});
