import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  deref,
  derefWithRef,
  enumValues,
  isAnonymous,
  listOperations,
  loadDocument,
  type OpenApiDocument,
  type OperationInfo,
  operationParameters,
  operationResponses,
  operationSecurity,
  type PublicOperationId,
  requestBody,
  resolveRef,
  responseFor,
  type SchemesOf,
  securitySchemeNames,
} from '../src/index.js';

// A small document with every case the reader must handle; the bundle has only some of them today.
const tiny: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 't', version: '1.0.0' },
  security: [{ bearerAuth: [] }],
  paths: {
    '/things/{thing}': {
      parameters: [
        { $ref: '#/components/parameters/Thing' },
        { name: 'view', in: 'query', schema: { type: 'string' } },
        { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
      ],
      get: {
        operationId: 'getThing',
        parameters: [
          { name: 'view', in: 'query', required: true, schema: { $ref: '#/components/schemas/View' } },
          { name: 'x-trace', in: 'header', required: true },
          { name: 'view', in: 'header' },
        ],
        responses: {
          '200': {
            description: 'ok',
            headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          '4XX': { $ref: '#/components/responses/Problem' },
          default: { description: 'other' },
        },
      },
      put: {
        operationId: 'putThing',
        security: [{ grant: [] }, { bearerAuth: [], grant: [] }],
        requestBody: { $ref: '#/components/requestBodies/Thing' },
        responses: { '204': { description: 'done' } },
      },
      delete: { operationId: 'deleteThing', security: [], responses: {} },
      patch: { operationId: 'patchThing', security: [{}, { bearerAuth: [] }], responses: {} },
    },
  },
  components: {
    parameters: { Thing: { name: 'thing', in: 'path', required: true, schema: { type: 'string' } } },
    schemas: {
      View: { type: 'string', enum: ['short', 'long'], description: 'How much to show.' },
      Alias: { $ref: '#/components/schemas/View', description: 'Another name.' },
      Thing: { type: 'object', properties: { view: { $ref: '#/components/schemas/View' } } },
      'a/b~c': { type: 'integer', enum: [1, 2] },
      Loop: { $ref: '#/components/schemas/Loop' },
    },
    headers: { 'Request-Id': { required: true, schema: { type: 'string' } } },
    responses: {
      Problem: { description: 'problem', content: { 'application/json': { schema: { type: 'object' } } } },
    },
    requestBodies: {
      Thing: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
      },
    },
  },
};

const op = (id: string): OperationInfo => {
  const found = listOperations(tiny).find((o) => o.operationId === id);
  if (!found) throw new Error(id);
  return found;
};

describe('resolveRef and deref', () => {
  it('follows a local pointer, unescaping ~1 and ~0', () => {
    expect(resolveRef(tiny, '#/components/schemas/a~1b~0c')).toEqual({ type: 'integer', enum: [1, 2] });
  });

  it.each([
    ['https://example.com/x.json#/a', 'only local $refs are supported, got https://example.com/x.json#/a'],
    ['#/components/schemas/Nope', 'unresolvable $ref #/components/schemas/Nope'],
    ['#/components/schemas/View/enum/7', 'unresolvable $ref #/components/schemas/View/enum/7'],
  ])('refuses %s', (ref, message) => {
    expect(() => resolveRef(tiny, ref)).toThrow(message);
  });

  it('follows a chain, lays the referring keywords over the target, and says where it ended', () => {
    const { value, ref } = derefWithRef(tiny, { $ref: '#/components/schemas/Alias' });
    expect(value).toEqual({ type: 'string', enum: ['short', 'long'], description: 'Another name.' });
    expect(ref).toBe('#/components/schemas/View');
  });

  it('returns the target itself when nothing sits beside the $ref, and a value without one as it is', () => {
    const schemas = tiny.components.schemas as Record<string, unknown>;
    expect(deref(tiny, { $ref: '#/components/schemas/Thing' })).toBe(schemas.Thing);
    const plain = { type: 'string' };
    expect(deref(tiny, plain)).toBe(plain);
  });

  it('refuses a cycle', () => {
    expect(() => deref(tiny, { $ref: '#/components/schemas/Loop' })).toThrow('$ref cycle');
  });
});

describe('operationParameters', () => {
  it('merges path-level parameters, the operation overriding by location and name', () => {
    const parameters = operationParameters(tiny, op('getThing'));
    expect(parameters.map((p) => [p.in, p.name, p.required])).toEqual([
      ['path', 'thing', true],
      ['query', 'view', true],
      ['header', 'x-trace', true],
      ['header', 'view', undefined],
    ]);
    expect(parameters[1]?.schema).toEqual({ $ref: '#/components/schemas/View' });
  });

  it('gives path-level parameters to an operation without its own', () => {
    expect(operationParameters(tiny, op('putThing')).map((p) => p.name)).toEqual([
      'thing',
      'view',
      'X-Trace',
    ]);
  });
});

describe('security', () => {
  it.each([
    ['getThing', [{ bearerAuth: [] }], ['bearerAuth'], false],
    ['putThing', [{ grant: [] }, { bearerAuth: [], grant: [] }], ['grant', 'bearerAuth'], false],
    ['deleteThing', [], [], true],
    ['patchThing', [{}, { bearerAuth: [] }], ['bearerAuth'], true],
  ])('%s: own security else the document default', (id, requirements, schemes, anonymous) => {
    expect(operationSecurity(tiny, op(id))).toEqual(requirements);
    expect(securitySchemeNames(tiny, op(id))).toEqual(schemes);
    expect(isAnonymous(tiny, op(id))).toBe(anonymous);
  });

  it('is public when neither the operation nor the document says anything', () => {
    const bare = { ...tiny, security: undefined };
    expect(isAnonymous(bare, op('getThing'))).toBe(true);
  });
});

describe('requestBody and responses', () => {
  it('follows a request body reference and keeps its schema as written', () => {
    expect(requestBody(tiny, op('putThing'))).toMatchObject({
      required: true,
      schema: { $ref: '#/components/schemas/Thing' },
    });
    expect(requestBody(tiny, op('getThing'))).toBeUndefined();
  });

  it('lists responses with their schema, followed headers and a reference to each', () => {
    const responses = operationResponses(tiny, op('getThing'));
    expect(responses.map((r) => [r.status, r.ref, r.schema])).toEqual([
      ['200', '#/paths/~1things~1{thing}/get/responses/200', { $ref: '#/components/schemas/Thing' }],
      ['4XX', '#/components/responses/Problem', { type: 'object' }],
      ['default', '#/paths/~1things~1{thing}/get/responses/default', undefined],
    ]);
    expect(responses[0]?.headers).toEqual({ 'Request-Id': { required: true, schema: { type: 'string' } } });
    // The reference of a response under `paths` resolves to it.
    const getThing = tiny.paths['/things/{thing}']?.get as { responses: Record<string, unknown> };
    expect(resolveRef(tiny, responses[0]?.ref ?? '')).toBe(getThing.responses['200']);
  });

  it.each([
    [200, '200'],
    [404, '4XX'],
    [503, 'default'],
  ])('picks the exact status, then its class, then default: %i → %s', (status, key) => {
    expect(responseFor(tiny, op('getThing'), status)?.status).toBe(key);
  });

  it('has no response for an undocumented status without default', () => {
    expect(responseFor(tiny, op('putThing'), 200)).toBeUndefined();
  });
});

describe('enumValues', () => {
  it.each([
    ['a name', 'View'],
    ['a reference', '#/components/schemas/View'],
    ['an alias', 'Alias'],
  ])('reads the values by %s', (_, schema) => {
    expect(enumValues(tiny, schema)).toEqual(['short', 'long']);
  });

  it('reads them from a schema object', () => {
    expect(enumValues(tiny, { $ref: '#/components/schemas/View' })).toEqual(['short', 'long']);
  });

  it('refuses a schema that is not an enum', () => {
    expect(() => enumValues(tiny, 'Thing')).toThrow('#/components/schemas/Thing is not an enum');
  });
});

describe('the bundled document through the reader', () => {
  const doc = loadDocument();
  const ops = listOperations(doc);

  it('leaves getHealth alone as the one anonymous operation (conventions §4)', () => {
    expect(ops.filter((o) => isAnonymous(doc, o)).map((o) => o.operationId)).toEqual(['getHealth']);
  });

  it('resolves every parameter, body and response of every operation', () => {
    for (const o of ops) {
      for (const p of operationParameters(doc, o)) expect(['path', 'query', 'header']).toContain(p.in);
      const body = requestBody(doc, o);
      if (body) expect(Object.keys(body.content).length).toBeGreaterThan(0);
      for (const r of operationResponses(doc, o)) expect(resolveRef(doc, r.ref)).toBeDefined();
    }
  });

  it('reads an enum of the spec', () => {
    expect(enumValues(doc, 'Role')).toEqual(['owner', 'admin', 'editor', 'viewer']);
  });
});

describe('the security types generated beside the schema types', () => {
  it('say what the bundle says (checked by the typecheck)', () => {
    expectTypeOf<PublicOperationId>().toEqualTypeOf<'getHealth'>();
    expectTypeOf<SchemesOf<'getHealth'>>().toBeNever();
    expectTypeOf<SchemesOf<'exchangeToken'>>().toEqualTypeOf<'grantCredential'>();
    expectTypeOf<SchemesOf<'getMe'>>().toEqualTypeOf<'bearerAuth'>();
    const doc = loadDocument();
    const publicIds = listOperations(doc)
      .filter((o) => isAnonymous(doc, o))
      .map((o) => o.operationId);
    expect(publicIds).toEqual(['getHealth' satisfies PublicOperationId]);
  });
});
