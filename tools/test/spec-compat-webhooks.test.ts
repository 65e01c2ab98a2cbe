// The compatibility policy of webhooks (the `webhooks` section), kind by kind: each row changes one
// thing in a small bundled contract with a webhook whose payload is the schema an event stream's branch
// gives its data, and says how tools/spec-compat.mjs must classify it and under which operations. A
// receiver reads a delivery as a client reads a response.
import { describe, expect, it } from 'vitest';
import { type Change, compareContracts, POLICY } from '../spec-compat.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the fixture is a plain JSON document edited freely
type Doc = any;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const header = (name: string, required: boolean) => ({
  name,
  in: 'header',
  required,
  schema: { type: 'string', maxLength: 64, pattern: '^[ -~]+$' },
});
const webhook = (operationId: string) => ({
  post: {
    operationId,
    parameters: [
      ref('parameters', 'WebhookId'),
      ref('parameters', 'WebhookSignature'),
      header('svc-webhook-test', false),
    ],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: ref('schemas', 'ThingEvent') } },
    },
    responses: { '2XX': { description: 'Received.' } },
  },
});

/** A bundled contract: a stream of thing events, and a webhook per event type with the same payload. */
function contract(): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'Webhooks', version: '1.0.0' },
    paths: {
      '/things/events': {
        get: {
          operationId: 'streamThingEvents',
          responses: {
            '200': {
              description: 'The events.',
              content: {
                'text/event-stream': { schema: { type: 'array', items: ref('schemas', 'ThingEventItem') } },
              },
            },
          },
        },
      },
    },
    webhooks: {
      'thing.created': webhook('thingCreatedWebhook'),
      'thing.deleted': webhook('thingDeletedWebhook'),
    },
    components: {
      parameters: {
        WebhookId: header('webhook-id', true),
        WebhookSignature: header('webhook-signature', true),
      },
      schemas: {
        ThingEventItem: {
          type: 'object',
          required: ['event', 'id', 'data'],
          properties: {
            event: { type: 'string', enum: ['thing.created', 'thing.deleted'] },
            id: { type: 'string' },
            data: { type: 'string', contentMediaType: 'application/json' },
          },
          oneOf: [
            {
              required: ['event', 'data'],
              properties: {
                event: { enum: ['thing.created', 'thing.deleted'] },
                data: { contentSchema: ref('schemas', 'ThingEvent') },
              },
            },
          ],
        },
        ThingEvent: {
          type: 'object',
          required: ['id', 'type', 'name'],
          properties: {
            id: { type: 'string' },
            type: { type: 'string', enum: ['thing.created', 'thing.deleted'] },
            name: { type: 'string', maxLength: 63 },
            size: { type: ['string', 'null'], maxLength: 16 },
          },
        },
      },
    },
  };
}

const CREATED = 'WEBHOOK thing.created';
const DELETED = 'WEBHOOK thing.deleted';
const STREAM = 'GET /things/events';
const event = (d: Doc) => d.components.schemas.ThingEvent;
const created = (d: Doc) => d.webhooks['thing.created'].post;

interface Row {
  change: (doc: Doc) => void;
  kind: string;
  class: 'breaking' | 'additive';
  /** The webhooks it is reported under (the stream may report the same schema change too). */
  webhooks: string[];
}

const rows: Record<string, Row> = {
  'a new webhook': {
    change: (d) => {
      d.webhooks['thing.renamed'] = webhook('thingRenamedWebhook');
    },
    kind: 'webhook-added',
    class: 'additive',
    webhooks: ['WEBHOOK thing.renamed'],
  },
  'a removed webhook': {
    change: (d) => {
      delete d.webhooks['thing.deleted'];
    },
    kind: 'webhook-removed',
    class: 'breaking',
    webhooks: [DELETED],
  },
  'a field removed from the payload': {
    change: (d) => {
      delete event(d).properties.name;
      event(d).required = ['id', 'type'];
    },
    kind: 'response-field-removed',
    class: 'breaking',
    webhooks: [CREATED, DELETED],
  },
  "a payload field's type widened (null allowed)": {
    change: (d) => {
      event(d).properties.name.type = ['string', 'null'];
    },
    kind: 'response-type-changed',
    class: 'breaking',
    webhooks: [CREATED, DELETED],
  },
  "a payload field's type narrowed": {
    change: (d) => {
      event(d).properties.size.type = 'string';
    },
    kind: 'response-type-narrowed',
    class: 'additive',
    webhooks: [CREATED, DELETED],
  },
  'a new optional field in the payload': {
    change: (d) => {
      event(d).properties.actor = { type: 'string' };
    },
    kind: 'response-field-added',
    class: 'additive',
    webhooks: [CREATED, DELETED],
  },
  'a payload field that is no longer always present': {
    change: (d) => {
      event(d).required = ['id', 'type'];
    },
    kind: 'response-field-became-optional',
    class: 'breaking',
    webhooks: [CREATED, DELETED],
  },
  'a header parameter removed from one webhook': {
    change: (d) => {
      created(d).parameters.splice(1, 1);
    },
    kind: 'response-header-removed',
    class: 'breaking',
    webhooks: [CREATED],
  },
  'a shared header parameter no longer required': {
    change: (d) => {
      d.components.parameters.WebhookId.required = false;
    },
    kind: 'response-header-became-optional',
    class: 'breaking',
    webhooks: [CREATED, DELETED],
  },
  'a new header parameter': {
    change: (d) => {
      created(d).parameters.push(header('webhook-attempt', true));
    },
    kind: 'response-header-added',
    class: 'additive',
    webhooks: [CREATED],
  },
  "a header's pattern changed": {
    change: (d) => {
      d.components.parameters.WebhookSignature.schema.pattern = '^v1,.*$';
    },
    kind: 'response-constraint-changed',
    class: 'breaking',
    webhooks: [CREATED, DELETED],
  },
  "a webhook's operationId changed": {
    change: (d) => {
      created(d).operationId = 'thingCreated';
    },
    kind: 'operation-id-changed',
    class: 'breaking',
    webhooks: [CREATED],
  },
  'a payload media type removed': {
    change: (d) => {
      created(d).requestBody.content = {
        'application/x-www-form-urlencoded': { schema: { type: 'object' } },
      };
    },
    kind: 'response-media-type-removed',
    class: 'breaking',
    webhooks: [CREATED],
  },
};

describe('the compatibility policy of webhooks, as their receivers read them', () => {
  it.each(Object.entries(rows))('%s', (_name, row) => {
    const current = contract();
    row.change(current);
    const changes: Change[] = compareContracts(contract(), current);
    const onWebhooks = changes.filter((c) => c.operation.startsWith('WEBHOOK '));
    const ofKind = onWebhooks.filter((c) => c.kind === row.kind);
    expect(ofKind.length, JSON.stringify(changes, null, 2)).toBeGreaterThan(0);
    expect(ofKind.every((c) => c.class === row.class)).toBe(true);
    expect([...new Set(ofKind.map((c) => c.operation))].sort()).toEqual([...row.webhooks].sort());
    // Breaking exactly when the row says so, counting only what the webhooks report.
    expect(
      onWebhooks.some((c) => c.class === 'breaking'),
      JSON.stringify(onWebhooks, null, 2),
    ).toBe(row.class === 'breaking');
    for (const c of changes) expect(c.class).toBe(POLICY[c.kind]);
  });

  it('finds nothing when nothing changed', () => {
    expect(compareContracts(contract(), contract())).toEqual([]);
  });

  it('reports a payload change under every webhook and, in the stricter event direction, the stream', () => {
    const current = contract();
    event(current).properties.name.maxLength = 128;
    const kinds = compareContracts(contract(), current).map((c) => `${c.operation} ${c.kind}`);
    expect(kinds.sort()).toEqual(
      [
        `${CREATED} response-constraint-loosened`,
        `${DELETED} response-constraint-loosened`,
        `${STREAM} event-constraint-loosened`,
      ].sort(),
    );
  });

  it('points a removed webhook at the section and a new one at its operation', () => {
    const current = contract();
    delete current.webhooks['thing.deleted'];
    current.webhooks['thing.renamed'] = webhook('thingRenamedWebhook');
    expect(compareContracts(contract(), current)).toEqual([
      expect.objectContaining({ kind: 'webhook-added', pointer: '/webhooks/thing.renamed/post' }),
      expect.objectContaining({
        kind: 'webhook-removed',
        pointer: '/webhooks',
        operationId: 'thingDeletedWebhook',
      }),
    ]);
  });
});
