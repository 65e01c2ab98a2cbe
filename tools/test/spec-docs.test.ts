// The docs page's document: each stream operation's description ends with its events, and nothing else
// changes (the bundle itself is left as it is).
import { describe, expect, it } from 'vitest';
import { withStreamEvents } from '../spec-docs.mjs';

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
