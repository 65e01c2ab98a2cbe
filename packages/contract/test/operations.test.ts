import { describe, expect, it } from 'vitest';
import { listOperations, loadDocument, type OpenApiDocument } from '../src/index.js';

const tiny: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 't', version: '1.0.0' },
  paths: {
    '/things': {
      parameters: [],
      get: { operationId: 'listThings', tags: ['Things'], summary: 'List things' },
      post: { operationId: 'createThing', tags: ['Things'], summary: 'Create a thing' },
    },
    '/things/{thing}': { delete: { operationId: 'deleteThing', summary: 'Delete a thing' } },
  },
  components: {},
};

describe('listOperations', () => {
  it('finds every method of every path item, in spec order, and ignores non-method keys', () => {
    const found = listOperations(tiny).map(({ operationId, method, path, tag }) => ({
      operationId,
      method,
      path,
      tag,
    }));
    expect(found).toEqual([
      { operationId: 'listThings', method: 'get', path: '/things', tag: 'Things' },
      { operationId: 'createThing', method: 'post', path: '/things', tag: 'Things' },
      { operationId: 'deleteThing', method: 'delete', path: '/things/{thing}', tag: undefined },
    ]);
  });

  it('refuses an operation without an operationId', () => {
    const broken: OpenApiDocument = { ...tiny, paths: { '/x': { get: { summary: 'no id' } } } };
    expect(() => listOperations(broken)).toThrow('GET /x has no operationId');
  });
});

describe('the bundled document', () => {
  it('is the v1 spec, with unique operationIds', () => {
    const doc = loadDocument();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers?.every((server) => server.url.endsWith('/v1'))).toBe(true);
    const ids = listOperations(doc).map((op) => op.operationId);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
