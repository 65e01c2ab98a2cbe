// The docs page's document: each stream operation's description ends with its events, and nothing else
// changes (the bundle itself is left as it is).
import { describe, expect, it } from 'vitest';
import { withStreamEvents, withWebhookTypes } from '../spec-docs.mjs';

const doc = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/events': {
      get: {
        operationId: 'streamEvents',
        description: 'The events.',
        responses: {
          '200': {
            description: 'ok',
            content: {
              'text/event-stream': {
                schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } },
              },
            },
          },
        },
      },
    },
    '/me': {
      get: {
        operationId: 'getMe',
        description: 'Me.',
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: {} } } } },
      },
    },
  },
  components: {
    schemas: {
      Item: {
        oneOf: [
          {
            properties: {
              event: { enum: ['a.created', 'a.deleted'] },
              data: { contentSchema: { $ref: '#/components/schemas/A' } },
            },
          },
          {
            properties: {
              event: { const: 'stream.ended' },
              data: { contentSchema: { $ref: '#/components/schemas/Ended' } },
            },
          },
        ],
      },
    },
  },
};

describe('withStreamEvents', () => {
  const page = withStreamEvents(doc);

  it("ends a stream operation's description with a table of its events and their data schemas", () => {
    const description: string = page.paths['/events'].get.description;
    expect(description.startsWith('The events.\n\n### Events')).toBe(true);
    expect(description).toContain('| `a.created`, `a.deleted` | `A` |');
    expect(description).toContain('| `stream.ended` | `Ended` |');
  });

  it('leaves other operations and the given document as they are', () => {
    expect(page.paths['/me'].get.description).toBe('Me.');
    expect(doc.paths['/events'].get.description).toBe('The events.');
  });
});

describe('withWebhookTypes', () => {
  const hooks = {
    openapi: '3.1.0',
    info: { title: 'Hooks', version: '1' },
    webhooks: {
      'a.created': {
        post: {
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } },
        },
      },
      'b.created': {
        post: {
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/B' } } } },
        },
      },
    },
    components: {
      schemas: {
        A: { type: 'object', properties: { type: { type: 'string', enum: ['a.created', 'a.deleted'] } } },
        B: { type: 'object', properties: { id: { type: 'string' } } },
      },
    },
  };
  const page = withWebhookTypes(hooks);
  const schemaOf = (d: typeof hooks, name: 'a.created' | 'b.created') =>
    d.webhooks[name].post.requestBody.content['application/json'].schema;

  it("narrows a payload's `type` to the webhook's own name, beside the shared schema", () => {
    expect(schemaOf(page, 'a.created')).toEqual({
      allOf: [{ $ref: '#/components/schemas/A' }, { properties: { type: { const: 'a.created' } } }],
    });
  });

  it('leaves a payload without `type`, and the given document, as they are', () => {
    expect(schemaOf(page, 'b.created')).toEqual({ $ref: '#/components/schemas/B' });
    expect(schemaOf(hooks, 'a.created')).toEqual({ $ref: '#/components/schemas/A' });
  });
});
