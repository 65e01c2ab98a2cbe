// The compatibility policy, kind by kind: each row changes one thing in a small bundled contract and
// says how tools/spec-compat.mjs must classify it and which operations it must be reported under.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Change, compareContracts, POLICY } from '../spec-compat.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the fixture is a plain JSON document edited freely
type Doc = any;

const THING = { $ref: '#/components/schemas/Thing' };
const ERROR = {
  description: 'Bad request.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/** A bundled contract with three operations sharing `Thing` and `State`. */
function contract(): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'Fixture', version: '1.0.0' },
    servers: [{ url: 'https://api.example.com/v1' }],
    security: [{ bearerAuth: [] }],
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          'x-svc': { permission: 'read' },
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200 } },
            { name: 'state', in: 'query', schema: { $ref: '#/components/schemas/State' } },
            { name: 'Trace-Id', in: 'header', required: true, schema: { type: 'string' } },
          ],
          responses: {
            '200': {
              description: 'The things.',
              headers: { 'Request-Id': { required: true, schema: { type: 'string' } } },
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { things: { type: 'array', items: THING } } },
                },
              },
            },
            '400': ERROR,
          },
        },
        post: {
          operationId: 'createThing',
          'x-svc': { permission: 'computers' },
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateThing' } } },
          },
          responses: {
            '201': {
              description: 'Created.',
              content: { 'application/json': { schema: { type: 'object', properties: { thing: THING } } } },
            },
            '400': ERROR,
          },
        },
      },
      '/things/{thing}': {
        get: {
          operationId: 'getThing',
          'x-svc': { permission: 'read' },
          parameters: [{ name: 'thing', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'The thing.',
              content: { 'application/json': { schema: { type: 'object', properties: { thing: THING } } } },
            },
          },
        },
      },
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Thing: {
          type: 'object',
          required: ['id', 'name', 'state'],
          properties: {
            id: { type: 'string' },
            name: { type: 'string', maxLength: 63 },
            state: { $ref: '#/components/schemas/State' },
            size: { type: 'integer' },
          },
        },
        State: { type: 'string', enum: ['on', 'off'] },
        CreateThing: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', maxLength: 63, pattern: '^[a-z]+$' },
            size: { type: 'integer', minimum: 1, default: 1 },
            state: { $ref: '#/components/schemas/State' },
            tags: { type: 'array', maxItems: 10, items: { type: 'string' } },
            source: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
          },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'object', properties: { code: { type: 'string' } } } },
        },
      },
    },
  };
}

const LIST = 'GET /things';
const CREATE = 'POST /things';
const GET = 'GET /things/{thing}';
const THING_OPS = [LIST, CREATE, GET];

const schemas = (doc: Doc) => doc.components.schemas;
const list = (doc: Doc) => doc.paths['/things'].get;
const create = (doc: Doc) => doc.paths['/things'].post;

interface Row {
  change: (doc: Doc) => void;
  /** Edits the base, for rows whose change is a return to the fixture as written. */
  before?: (doc: Doc) => void;
  kind: string;
  class: 'breaking' | 'additive' | 'deprecation';
  operations: string[];
}

const rows: Record<string, Row> = {
  'a new operation': {
    change: (d) => {
      d.paths['/things/{thing}'].delete = {
        operationId: 'deleteThing',
        responses: { '204': { description: 'Gone.' } },
      };
    },
    kind: 'operation-added',
    class: 'additive',
    operations: ['DELETE /things/{thing}'],
  },
  'a removed operation': {
    change: (d) => {
      delete d.paths['/things/{thing}'];
    },
    kind: 'operation-removed',
    class: 'breaking',
    operations: [GET],
  },
  'a renamed path': {
    change: (d) => {
      d.paths['/items/{thing}'] = d.paths['/things/{thing}'];
      delete d.paths['/things/{thing}'];
    },
    kind: 'operation-removed',
    class: 'breaking',
    operations: [GET],
  },
  'a renamed operationId': {
    change: (d) => {
      list(d).operationId = 'listAllThings';
    },
    kind: 'operation-id-changed',
    class: 'breaking',
    operations: [LIST],
  },
  'a deprecated operation': {
    change: (d) => {
      list(d).deprecated = true;
    },
    kind: 'operation-deprecated',
    class: 'deprecation',
    operations: [LIST],
  },
  'security dropped from one operation': {
    change: (d) => {
      list(d).security = [];
    },
    kind: 'security-changed',
    class: 'breaking',
    operations: [LIST],
  },
  'a changed security scheme (fans out to every secured operation)': {
    change: (d) => {
      d.components.securitySchemes.bearerAuth = { type: 'http', scheme: 'basic' };
    },
    kind: 'security-scheme-changed',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a permission that admits fewer callers (read → manage)': {
    change: (d) => {
      list(d)['x-svc'].permission = 'manage';
    },
    kind: 'permission-raised',
    class: 'breaking',
    operations: [LIST],
  },
  'a permission that admits more callers (computers → read)': {
    change: (d) => {
      create(d)['x-svc'].permission = 'read';
    },
    kind: 'permission-lowered',
    class: 'additive',
    operations: [CREATE],
  },
  'another permission that admits the same roles (computers → exec)': {
    change: (d) => {
      create(d)['x-svc'].permission = 'exec';
    },
    kind: 'permission-renamed',
    class: 'additive',
    operations: [CREATE],
  },
  'a permission for another kind of caller (read → credential)': {
    change: (d) => {
      list(d)['x-svc'].permission = 'credential';
    },
    kind: 'permission-changed',
    class: 'breaking',
    operations: [LIST],
  },
  'a changed server URL': {
    change: (d) => {
      d.servers = [{ url: 'https://api.example.com/v2' }];
    },
    kind: 'server-changed',
    class: 'breaking',
    operations: ['*'],
  },
  'a new optional query parameter': {
    change: (d) => {
      list(d).parameters.push({ name: 'cursor', in: 'query', schema: { type: 'string' } });
    },
    kind: 'parameter-added-optional',
    class: 'additive',
    operations: [LIST],
  },
  'a new required query parameter': {
    change: (d) => {
      list(d).parameters.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } });
    },
    kind: 'parameter-added-required',
    class: 'breaking',
    operations: [LIST],
  },
  'a removed query parameter': {
    change: (d) => {
      list(d).parameters.splice(0, 1);
    },
    kind: 'parameter-removed',
    class: 'breaking',
    operations: [LIST],
  },
  'a renamed query parameter': {
    change: (d) => {
      list(d).parameters[0].name = 'page_size';
    },
    kind: 'parameter-renamed',
    class: 'breaking',
    operations: [LIST],
  },
  'a query parameter that became required': {
    change: (d) => {
      list(d).parameters[0].required = true;
    },
    kind: 'parameter-became-required',
    class: 'breaking',
    operations: [LIST],
  },
  'a header parameter that became optional': {
    change: (d) => {
      list(d).parameters[2].required = false;
    },
    kind: 'parameter-became-optional',
    class: 'additive',
    operations: [LIST],
  },
  'a changed parameter serialization': {
    change: (d) => {
      list(d).parameters[0].style = 'deepObject';
    },
    kind: 'parameter-style-changed',
    class: 'breaking',
    operations: [LIST],
  },
  'a request body that became optional': {
    change: (d) => {
      create(d).requestBody.required = false;
    },
    kind: 'request-body-became-optional',
    class: 'additive',
    operations: [CREATE],
  },
  'a request body that became required': {
    before: (d) => {
      create(d).requestBody.required = false;
    },
    change: () => {},
    kind: 'request-body-became-required',
    class: 'breaking',
    operations: [CREATE],
  },
  'a removed request body': {
    change: (d) => {
      delete create(d).requestBody;
    },
    kind: 'request-body-removed',
    class: 'breaking',
    operations: [CREATE],
  },
  'a new request media type': {
    change: (d) => {
      create(d).requestBody.content['application/merge-patch+json'] = { schema: { type: 'object' } };
    },
    kind: 'request-media-type-added',
    class: 'additive',
    operations: [CREATE],
  },
  'a new optional request field': {
    change: (d) => {
      schemas(d).CreateThing.properties.colour = { type: 'string' };
    },
    kind: 'request-field-added-optional',
    class: 'additive',
    operations: [CREATE],
  },
  'a new required request field': {
    change: (d) => {
      schemas(d).CreateThing.properties.colour = { type: 'string' };
      schemas(d).CreateThing.required.push('colour');
    },
    kind: 'request-field-added-required',
    class: 'breaking',
    operations: [CREATE],
  },
  'a removed request field': {
    change: (d) => {
      delete schemas(d).CreateThing.properties.tags;
    },
    kind: 'request-field-removed',
    class: 'breaking',
    operations: [CREATE],
  },
  'a renamed request field': {
    change: (d) => {
      const { tags, ...rest } = schemas(d).CreateThing.properties;
      schemas(d).CreateThing.properties = { ...rest, labels: tags };
    },
    kind: 'request-field-renamed',
    class: 'breaking',
    operations: [CREATE],
  },
  'a request field that became required': {
    change: (d) => {
      schemas(d).CreateThing.required.push('size');
    },
    kind: 'request-field-became-required',
    class: 'breaking',
    operations: [CREATE],
  },
  'a request field that became optional': {
    change: (d) => {
      schemas(d).CreateThing.required = [];
    },
    kind: 'request-field-became-optional',
    class: 'additive',
    operations: [CREATE],
  },
  'a deprecated request field': {
    change: (d) => {
      schemas(d).CreateThing.properties.tags.deprecated = true;
    },
    kind: 'request-field-deprecated',
    class: 'deprecation',
    operations: [CREATE],
  },
  'a new response field (fans out)': {
    change: (d) => {
      schemas(d).Thing.properties.colour = { type: 'string' };
    },
    kind: 'response-field-added',
    class: 'additive',
    operations: THING_OPS,
  },
  'a removed response field (fans out)': {
    change: (d) => {
      delete schemas(d).Thing.properties.size;
    },
    kind: 'response-field-removed',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a renamed response field': {
    change: (d) => {
      const { size, ...rest } = schemas(d).Thing.properties;
      schemas(d).Thing.properties = { ...rest, disk_size: size };
    },
    kind: 'response-field-renamed',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a response field that became optional': {
    change: (d) => {
      schemas(d).Thing.required = ['id', 'state'];
    },
    kind: 'response-field-became-optional',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a response field that became required': {
    change: (d) => {
      schemas(d).Thing.required.push('size');
    },
    kind: 'response-field-became-required',
    class: 'additive',
    operations: THING_OPS,
  },
  'a changed request field type': {
    change: (d) => {
      schemas(d).CreateThing.properties.size = { type: 'string', default: 1, minLength: 1 };
    },
    kind: 'request-type-changed',
    class: 'breaking',
    operations: [CREATE],
  },
  'a request field that also accepts null': {
    change: (d) => {
      schemas(d).CreateThing.properties.name.type = ['string', 'null'];
    },
    kind: 'request-type-widened',
    class: 'additive',
    operations: [CREATE],
  },
  'a changed response field type': {
    change: (d) => {
      schemas(d).Thing.properties.size = { type: 'string' };
    },
    kind: 'response-type-changed',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a response field that may now be null': {
    change: (d) => {
      schemas(d).Thing.properties.size = { type: ['integer', 'null'] };
    },
    kind: 'response-type-changed',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a new enum value in a response': {
    change: (d) => {
      schemas(d).State.enum.push('idle');
    },
    kind: 'response-enum-value-added',
    class: 'additive',
    operations: THING_OPS,
  },
  'a new enum value in a request (query parameter and body)': {
    change: (d) => {
      schemas(d).State.enum.push('idle');
    },
    kind: 'request-enum-value-added',
    class: 'additive',
    operations: [LIST, CREATE],
  },
  'a removed enum value in a request': {
    change: (d) => {
      schemas(d).State.enum = ['on'];
    },
    kind: 'request-enum-value-removed',
    class: 'breaking',
    operations: [LIST, CREATE],
  },
  'a removed enum value in a response': {
    change: (d) => {
      schemas(d).State.enum = ['on'];
    },
    kind: 'response-enum-value-removed',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a tighter request maxLength': {
    change: (d) => {
      schemas(d).CreateThing.properties.name.maxLength = 32;
    },
    kind: 'request-constraint-tightened',
    class: 'breaking',
    operations: [CREATE],
  },
  'a looser request maxLength': {
    change: (d) => {
      schemas(d).CreateThing.properties.name.maxLength = 100;
    },
    kind: 'request-constraint-loosened',
    class: 'additive',
    operations: [CREATE],
  },
  'a higher minimum on a query parameter': {
    change: (d) => {
      list(d).parameters[0].schema.minimum = 5;
    },
    kind: 'request-constraint-tightened',
    class: 'breaking',
    operations: [LIST],
  },
  'a smaller request maxItems': {
    change: (d) => {
      schemas(d).CreateThing.properties.tags.maxItems = 5;
    },
    kind: 'request-constraint-tightened',
    class: 'breaking',
    operations: [CREATE],
  },
  'a changed request pattern': {
    change: (d) => {
      schemas(d).CreateThing.properties.name.pattern = '^[a-z0-9]+$';
    },
    kind: 'request-constraint-changed',
    class: 'breaking',
    operations: [CREATE],
  },
  'a removed request pattern': {
    change: (d) => {
      delete schemas(d).CreateThing.properties.name.pattern;
    },
    kind: 'request-constraint-loosened',
    class: 'additive',
    operations: [CREATE],
  },
  'a looser response maxLength': {
    change: (d) => {
      schemas(d).Thing.properties.name.maxLength = 100;
    },
    kind: 'response-constraint-loosened',
    class: 'breaking',
    operations: THING_OPS,
  },
  'a tighter response maxLength': {
    change: (d) => {
      schemas(d).Thing.properties.name.maxLength = 32;
    },
    kind: 'response-constraint-tightened',
    class: 'additive',
    operations: THING_OPS,
  },
  'a changed request default': {
    change: (d) => {
      schemas(d).CreateThing.properties.size.default = 2;
    },
    kind: 'request-default-changed',
    class: 'breaking',
    operations: [CREATE],
  },
  'a new request alternative (oneOf)': {
    change: (d) => {
      schemas(d).CreateThing.properties.source.oneOf.push({ type: 'boolean' });
    },
    kind: 'request-variant-added',
    class: 'additive',
    operations: [CREATE],
  },
  'unknown request fields now refused': {
    before: (d) => {
      delete schemas(d).CreateThing.additionalProperties;
    },
    change: () => {},
    kind: 'request-additional-properties-refused',
    class: 'breaking',
    operations: [CREATE],
  },
  'unknown request fields now allowed': {
    change: (d) => {
      delete schemas(d).CreateThing.additionalProperties;
    },
    kind: 'request-additional-properties-allowed',
    class: 'additive',
    operations: [CREATE],
  },
  'a removed error status': {
    change: (d) => {
      delete list(d).responses['400'];
    },
    kind: 'response-status-removed',
    class: 'breaking',
    operations: [LIST],
  },
  'a changed success status (200 → 202)': {
    change: (d) => {
      list(d).responses['202'] = list(d).responses['200'];
      delete list(d).responses['200'];
    },
    kind: 'response-success-status-added',
    class: 'breaking',
    operations: [LIST],
  },
  'a new error status': {
    change: (d) => {
      list(d).responses['429'] = ERROR;
    },
    kind: 'response-error-status-added',
    class: 'additive',
    operations: [LIST],
  },
  'a removed response media type': {
    change: (d) => {
      list(d).responses['200'].content = { 'text/csv': { schema: { type: 'string' } } };
    },
    kind: 'response-media-type-removed',
    class: 'breaking',
    operations: [LIST],
  },
  'a new response header': {
    change: (d) => {
      list(d).responses['200'].headers.RateLimit = { schema: { type: 'string' } };
    },
    kind: 'response-header-added',
    class: 'additive',
    operations: [LIST],
  },
  'a removed response header': {
    change: (d) => {
      list(d).responses['200'].headers = {};
    },
    kind: 'response-header-removed',
    class: 'breaking',
    operations: [LIST],
  },
  'a response header that became optional': {
    change: (d) => {
      list(d).responses['200'].headers['Request-Id'].required = false;
    },
    kind: 'response-header-became-optional',
    class: 'breaking',
    operations: [LIST],
  },
  'a new field in a shared error body': {
    change: (d) => {
      schemas(d).Error.properties.error.properties.request_id = { type: 'string' };
    },
    kind: 'response-field-added',
    class: 'additive',
    operations: [LIST, CREATE],
  },
};

describe('the compatibility policy', () => {
  it.each(Object.entries(rows))('%s', (_name, row) => {
    const base = contract();
    row.before?.(base);
    const current = contract();
    row.change(current);

    const changes: Change[] = compareContracts(base, current);
    const ofKind = changes.filter((c) => c.kind === row.kind);

    expect(ofKind.length, JSON.stringify(changes, null, 2)).toBeGreaterThan(0);
    expect(ofKind.every((c) => c.class === row.class)).toBe(true);
    expect([...new Set(ofKind.map((c) => c.operation))].sort()).toEqual([...row.operations].sort());
    // The edit is breaking exactly when its row says so: nothing else is misread as breaking.
    expect(changes.some((c) => c.class === 'breaking')).toBe(row.class === 'breaking');
    for (const c of changes) expect(c.class).toBe(POLICY[c.kind]);
  });

  it('covers at least 25 kinds of change', () => {
    expect(new Set(Object.values(rows).map((r) => r.kind)).size).toBeGreaterThanOrEqual(25);
  });

  it('finds nothing when only descriptions and examples change', () => {
    const base = contract();
    const current = structuredClone(base);
    schemas(current).Thing.description = 'A thing, described.';
    schemas(current).Thing.properties.name.examples = ['a-name'];
    list(current).summary = 'List every thing';
    expect(compareContracts(base, current)).toEqual([]);
  });

  it('compares no permission with a contract from before x-svc', () => {
    const base = contract();
    for (const operation of [list(base), create(base)]) delete operation['x-svc'];
    expect(compareContracts(base, contract())).toEqual([]);
  });

  it('reports where in the current bundle each change is', () => {
    const base = contract();
    const current = structuredClone(base);
    delete schemas(current).Thing.properties.size;
    schemas(current).State.enum.push('idle');
    const changes = compareContracts(base, current);
    expect(changes.find((c) => c.kind === 'response-field-removed')).toMatchObject({
      pointer: '/components/schemas/Thing/properties',
      message: '`things[].size` removed',
      where: 'response 200 body',
    });
    expect(changes.find((c) => c.kind === 'request-enum-value-added' && c.operation === LIST)).toMatchObject({
      pointer: '/components/schemas/State/enum',
      where: 'query parameter state',
    });
  });

  it('is the policy docs/compatibility.md states, kind by kind', () => {
    const doc = readFileSync(new URL('../../docs/compatibility.md', import.meta.url), 'utf8');
    const table = Object.fromEntries(
      [...doc.matchAll(/^\| `([a-z-]+)` \| (breaking|additive|deprecation) \|/gm)].map((m) => [m[1], m[2]]),
    );
    expect(table).toEqual({ ...POLICY });
  });
});
