// The front's newer examples: which changes leave Prism's choice of answer as it was, and which example
// value of the newer bundle stands in for the one Prism answered from the older.
import { describe, expect, it } from 'vitest';
import { currentExample, differOnlyInExamples } from '../mock-examples.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the fixture is a plain JSON document edited freely
type Doc = Record<string, any>;

/** A small bundle: a literal and a templated path, a shared example by `$ref`, and an inline one. */
function bundle(edit: (doc: Doc) => void = () => {}): Doc {
  const doc: Doc = {
    openapi: '3.1.0',
    info: { title: 'Mock', version: '1', description: 'The API.' },
    paths: {
      '/health': {
        get: {
          summary: 'Health',
          responses: {
            '200': {
              description: 'Up.',
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { example: { type: 'string' } } },
                  examples: { ok: { value: { status: 'ok' } }, busy: { value: { status: 'busy' } } },
                },
              },
            },
          },
        },
      },
      '/things/{thing}': {
        get: {
          responses: {
            '404': { $ref: '#/components/responses/NotFound' },
            '2XX': {
              description: 'A thing.',
              content: { 'application/json': { example: { id: 'a' } } },
            },
          },
        },
      },
      '/things/special': {
        get: {
          responses: {
            '200': {
              description: 'The special thing.',
              content: { 'application/json': { examples: { special: { value: { id: 's' } } } } },
            },
          },
        },
      },
    },
    components: {
      responses: {
        NotFound: {
          description: 'No such thing.',
          content: {
            'application/json': {
              examples: {
                not_found: { $ref: '#/components/examples/NotFound' },
                same_value: { value: { error: 'same' } },
                also_same: { value: { error: 'same' } },
              },
            },
          },
        },
      },
      examples: { NotFound: { summary: 'Missing', value: { error: 'not_found' } } },
    },
  };
  edit(doc);
  return doc;
}

describe('differOnlyInExamples', () => {
  it.each<[string, { edit: (doc: Doc) => void; want: boolean }]>([
    ['the same document', { edit: () => {}, want: true }],
    [
      'an inline example value',
      {
        edit: (d) => {
          d.paths['/health'].get.responses['200'].content['application/json'].examples.ok.value.status = 'x';
        },
        want: true,
      },
    ],
    [
      'a shared example, by $ref',
      {
        edit: (d) => {
          d.components.examples.NotFound.value = { error: 'gone' };
        },
        want: true,
      },
    ],
    [
      'prose: a description and a summary',
      {
        edit: (d) => {
          d.info.description = 'Changed.';
          d.paths['/health'].get.summary = 'Changed';
        },
        want: true,
      },
    ],
    [
      'a new example',
      {
        edit: (d) => {
          d.paths['/health'].get.responses['200'].content['application/json'].examples.new = { value: {} };
        },
        want: true,
      },
    ],
    [
      'a schema',
      {
        edit: (d) => {
          d.paths['/health'].get.responses['200'].content['application/json'].schema.type = 'array';
        },
        want: false,
      },
    ],
    [
      'a property called example (a name, not an annotation)',
      {
        edit: (d) => {
          d.paths['/health'].get.responses['200'].content['application/json'].schema.properties.example = {
            type: 'integer',
          };
        },
        want: false,
      },
    ],
    [
      'a new path',
      {
        edit: (d) => {
          d.paths['/more'] = {};
        },
        want: false,
      },
    ],
  ])('%s', (_name, { edit, want }) => {
    expect(differOnlyInExamples(bundle(), bundle(edit))).toBe(want);
  });
});

describe('currentExample', () => {
  const served = bundle();
  const current = bundle((d) => {
    d.paths['/health'].get.responses['200'].content['application/json'].examples.ok.value = { status: 'new' };
    d.paths['/things/{thing}'].get.responses['2XX'].content['application/json'].example = { id: 'b' };
    d.paths['/things/special'].get.responses['200'].content['application/json'].examples = {
      renamed: { value: { id: 't' } },
    };
    d.components.examples.NotFound.value = { error: 'gone' };
    d.components.responses.NotFound.content['application/json'].examples.also_same.value = { error: 'also' };
  });
  const answer = { served, current, method: 'GET', mediaType: 'application/json' };

  it.each<[string, { given: Partial<Parameters<typeof currentExample>[0]>; want: unknown }]>([
    [
      'an inline example, found by its value',
      { given: { pathname: '/health', status: 200, body: { status: 'ok' } }, want: { status: 'new' } },
    ],
    [
      'another example of the same answer, left as it was',
      { given: { pathname: '/health', status: 200, body: { status: 'busy' } }, want: { status: 'busy' } },
    ],
    [
      'a shared example through a $ref response and a $ref example',
      {
        given: { pathname: '/things/1', status: 404, body: { error: 'not_found' } },
        want: { error: 'gone' },
      },
    ],
    [
      'a lone example under a status range',
      { given: { pathname: '/things/1', status: 201, body: { id: 'a' } }, want: { id: 'b' } },
    ],
    [
      'two examples of one value: the one the request preferred',
      {
        given: { pathname: '/things/1', status: 404, body: { error: 'same' }, preferred: 'also_same' },
        want: { error: 'also' },
      },
    ],
    [
      'a literal path before a templated one; its example renamed away',
      { given: { pathname: '/things/special', status: 200, body: { id: 's' } }, want: undefined },
    ],
    [
      'a body that is no example (generated)',
      { given: { pathname: '/health', status: 200, body: { status: 'generated' } }, want: undefined },
    ],
    ['a path the bundle lacks', { given: { pathname: '/nothing', status: 200, body: {} }, want: undefined }],
    [
      'a media type the answer lacks',
      {
        given: { pathname: '/health', status: 200, body: { status: 'ok' }, mediaType: 'text/plain' },
        want: undefined,
      },
    ],
  ])('%s', (_name, { given, want }) => {
    const found = currentExample({ ...answer, ...given } as Parameters<typeof currentExample>[0]);
    expect(found?.value).toEqual(want);
  });
});
