// The types are generated from the document's shape, so prose edits must vanish from it and nothing else may.
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { withoutProse } from '../scripts/shape.mjs';

const cases: { name: string; input: unknown; expected: unknown }[] = [
  {
    name: 'drops description, summary, example(s) and externalDocs where they are keywords',
    input: {
      info: { title: 'T', version: '1', summary: 's', description: 'd' },
      tags: [{ name: 'Things', description: 'd', externalDocs: { url: 'https://example.com' } }],
      get: { summary: 's', description: 'd', operationId: 'listThings' },
      schema: { type: 'string', description: 'd', example: 'x', examples: ['x'], default: 'y' },
    },
    expected: {
      info: { title: 'T', version: '1' },
      tags: [{ name: 'Things' }],
      get: { operationId: 'listThings' },
      schema: { type: 'string', default: 'y' },
    },
  },
  {
    name: 'keeps a property, a header and a component that are named like a prose keyword',
    input: {
      properties: { description: { type: 'string', description: 'd' }, summary: { type: 'integer' } },
      headers: { example: { schema: { type: 'string' }, description: 'd' } },
      schemas: { examples: { type: 'object', title: 'Examples' } },
      required: ['description'],
    },
    expected: {
      properties: { description: { type: 'string' }, summary: { type: 'integer' } },
      headers: { example: { schema: { type: 'string' } } },
      schemas: { examples: { type: 'object', title: 'Examples' } },
      required: ['description'],
    },
  },
  {
    name: 'keeps the names in security requirements and media-type maps',
    input: {
      security: [{ description: [] }],
      content: { 'application/json': { schema: { type: 'object' }, examples: { a: { value: 1 } } } },
    },
    expected: {
      security: [{ description: [] }],
      content: { 'application/json': { schema: { type: 'object' } } },
    },
  },
  {
    name: 'keeps operation parameter lists and enums as they are',
    input: { parameters: [{ name: 'limit', in: 'query', description: 'd', schema: { enum: ['a', 'b'] } }] },
    expected: { parameters: [{ name: 'limit', in: 'query', schema: { enum: ['a', 'b'] } }] },
  },
];

describe('withoutProse', () => {
  it.each(cases)('$name', ({ input, expected }) => {
    expect(withoutProse(input)).toEqual(expected);
  });

  it('generates the same types for two documents that differ only in prose', async () => {
    const document = (description: string) => ({
      openapi: '3.1.0',
      info: { title: 'T', version: '1', description },
      paths: {
        '/things': {
          get: {
            operationId: 'listThings',
            summary: description,
            responses: {
              '200': {
                description,
                content: {
                  'application/json': {
                    schema: { type: 'object', description, properties: { description: { type: 'string' } } },
                  },
                },
              },
            },
          },
        },
      },
    });
    const types = async (description: string) =>
      astToString(await openapiTS(withoutProse(document(description)) as never));
    const [before, after] = await Promise.all([types('Lists things.'), types('Lists every thing.')]);
    expect(after).toBe(before);
    expect(before).toContain('description?: string');
  });
});
