import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type components,
  enumValues,
  eventStream,
  loadDocument,
  type OperationId,
  resolveRef,
  streamEventBranch,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  webhookEventTypes,
  webhookHeaders,
  webhookNames,
  webhookOperation,
  webhookPayloadSchema,
} from '../src/index.js';

const doc = loadDocument();
const names = webhookNames(doc);

describe('webhookNames', () => {
  it('is every workspace event type, once, in the order of the enum', () => {
    expect(names.length).toBeGreaterThan(0);
    expect(names).toEqual(enumValues(doc, 'WorkspaceEventType'));
  });

  it('is the list the generated `webhookEventTypes` holds as a value', () => {
    expect([...webhookEventTypes]).toEqual(names);
  });
});

describe('webhookPayloadSchema: a delivery is the event as the stream carries it', () => {
  const stream = eventStream(doc, 'streamWorkspaceEvents');

  it.each(names)('%s: the schema of the stream branch that names it', (name) => {
    if (!stream) throw new Error('streamWorkspaceEvents is not a stream');
    const branch = streamEventBranch(stream, name);
    expect(branch, `the stream names no ${name}`).toBeDefined();
    const payload = webhookPayloadSchema(doc, name);
    expect(payload).toEqual({ schema: branch?.dataSchema, ref: branch?.dataRef });
    expect(resolveRef(doc, payload.ref)).toBeTypeOf('object');
  });

  it('throws for a name the document has no webhook for', () => {
    expect(() => webhookPayloadSchema(doc, 'stream.ended')).toThrow(/no webhook stream\.ended/);
  });
});

describe('webhookOperation and webhookHeaders', () => {
  it.each(names)('%s: a post with the Standard Webhooks headers, required', (name) => {
    const headers = webhookHeaders(doc, name);
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      expect(headers.find((h) => h.name === header)?.required, header).toBe(true);
    expect(webhookOperation(doc, name).operationId).toMatch(/Webhook$/);
  });
});

describe('the generated types', () => {
  it('type each payload as its components schema, and the headers a delivery carries', () => {
    expectTypeOf<WebhookEvent<'computer.created'>>().toEqualTypeOf<components['schemas']['ComputerEvent']>();
    expectTypeOf<WebhookEvent<'service_account.deleted'>>().toEqualTypeOf<
      components['schemas']['ServiceAccountEvent']
    >();
    expectTypeOf<WebhookHeaders<'key.created'>['webhook-id']>().toEqualTypeOf<string>();
    expectTypeOf<(typeof webhookEventTypes)[number]>().toEqualTypeOf<WebhookEventType>();
  });

  it("leave the webhooks' operations out of OperationId (no client calls them)", () => {
    expectTypeOf<'computerCreatedWebhook'>().not.toExtend<OperationId>();
    expectTypeOf<'createWebhookEndpoint'>().toExtend<OperationId>();
  });
});
