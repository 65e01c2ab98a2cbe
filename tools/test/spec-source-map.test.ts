// tools/spec-source-map.mjs on a throwaway tree: `$ref`s to whole files, to fragments of files and
// within a file, components that only the bundle names, pointers past what the sources hold, and
// pointers that end on a `$ref` (each kind of value a `$ref` stands for).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pointerSegments, SourceMap, toPointer } from '../spec-source-map.mjs';

const dir = mkdtempSync(join(tmpdir(), 'spec-source-map-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const files: Record<string, string> = {
  'openapi.yaml': `openapi: 3.1.0
info:
  title: Map fixture
  version: 1.0.0
paths:
  /things:
    $ref: paths/things.yaml
  /things/{thing}:
    get:
      $ref: paths/getThing.yaml
components:
  schemas:
    Thing:
      $ref: components/schemas/Thing.yaml
    Shared:
      $ref: components/common.yaml#/Shared
`,
  'paths/things.yaml': `get:
  operationId: listThings
  responses:
    '200':
      description: The things.
      content:
        application/json:
          schema:
            $ref: '#/components/local'
post:
  operationId: createThing
  parameters:
    - $ref: ../components/parameters/Verbose.yaml
  requestBody:
    $ref: ../components/bodies/NewThing.yaml
  responses:
    '201': {$ref: ../components/responses/Created.yaml}
components:
  local:
    type: array
    items:
      $ref: ../components/schemas/Thing.yaml
`,
  'components/parameters/Verbose.yaml': `name: verbose
in: query
schema:
  type: boolean
`,
  'components/bodies/NewThing.yaml': `content:
  application/json:
    schema:
      $ref: ../schemas/Thing.yaml
`,
  'components/responses/Created.yaml': `description: Created.
`,
  'paths/getThing.yaml': `operationId: getThing
responses:
  '200':
    description: The thing.
    content:
      application/json:
        schema:
          $ref: ../components/schemas/Orphan.yaml
`,
  'components/schemas/Thing.yaml': `type: object
properties:
  id:
    type: string
  shared:
    $ref: ../common.yaml#/Shared
`,
  'components/schemas/Orphan.yaml': `type: object
properties:
  label:
    type: string
`,
  'components/common.yaml': `Other:
  type: string
Shared:
  type: object
  properties:
    flag:
      type: boolean
`,
};
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), text);
}

const map = new SourceMap(join(dir, 'openapi.yaml'));
const at = (pointer: string | (string | number)[], onKey = true) => {
  const found = map.locate(pointer, { onKey });
  return `${relative(dir, found.file)}:${found.line}:${found.column}${found.exact ? '' : ' (nearest)'}`;
};

describe('SourceMap.locate', () => {
  it.each([
    ['/info/title', 'openapi.yaml:3:3'],
    ['/paths/~1things/get/operationId', 'paths/things.yaml:2:3'],
    [
      '/paths/~1things/get/responses/200/content/application~1json/schema/items/properties/id',
      'components/schemas/Thing.yaml:3:3',
    ],
    ['/paths/~1things~1{thing}/get/responses/200/description', 'paths/getThing.yaml:4:5'],
    ['/components/schemas/Thing/properties/shared/properties/flag', 'components/common.yaml:6:5'],
    ['/components/schemas/Shared/properties/flag/type', 'components/common.yaml:7:7'],
    // Only the bundle has #/components/schemas/Orphan: redocly named it after its file.
    ['/components/schemas/Orphan/properties/label', 'components/schemas/Orphan.yaml:3:3'],
    ['/paths/~1things/get/responses/404', 'paths/things.yaml:3:3 (nearest)'],
  ])('%s → %s', (pointer, want) => {
    expect(at(pointer)).toBe(want);
  });

  // A pointer that ends on a `$ref` is at that `$ref`'s key, in the file that holds it; one that goes
  // on past it is in the referenced file. `components` entries only name their file: followed.
  it.each([
    ['Path Item', '/paths/~1things', 'openapi.yaml:7:5'],
    ['Operation', '/paths/~1things~1{thing}/get', 'openapi.yaml:10:7'],
    [
      'schema (a local `$ref`)',
      '/paths/~1things/get/responses/200/content/application~1json/schema',
      'paths/things.yaml:9:13',
    ],
    [
      'items',
      '/paths/~1things/get/responses/200/content/application~1json/schema/items',
      'paths/things.yaml:22:7',
    ],
    ['parameter', '/paths/~1things/post/parameters/0', 'paths/things.yaml:13:7'],
    ['request body', '/paths/~1things/post/requestBody', 'paths/things.yaml:15:5'],
    ['response (flow style)', '/paths/~1things/post/responses/201', 'paths/things.yaml:17:13'],
    [
      'property (to a fragment)',
      '/components/schemas/Thing/properties/shared',
      'components/schemas/Thing.yaml:6:5',
    ],
    [
      'request body schema',
      '/paths/~1things/post/requestBody/content/application~1json/schema',
      'components/bodies/NewThing.yaml:4:7',
    ],
  ])('a pointer ending on a %s `$ref` → %s (key or value alike)', (_kind, pointer, want) => {
    expect(at(pointer)).toBe(want);
    expect(at(pointer, false)).toBe(want);
  });

  it.each([
    ['/components/schemas/Thing', 'components/schemas/Thing.yaml:1:1'],
    ['/components/schemas/Shared', 'components/common.yaml:3:1'],
  ])('a `components` entry that is a `$ref` is followed: %s → %s', (pointer, want) => {
    expect(at(pointer)).toBe(want);
  });

  it('says where the node a `$ref` names is written', () => {
    const found = map.locate('/paths/~1things/post/parameters/0');
    expect(found.pointer).toBe('/post/parameters/0');
    expect(found.refersTo && `${relative(dir, found.refersTo.file)}:${found.refersTo.line}`).toBe(
      'components/parameters/Verbose.yaml:1',
    );
    expect(map.locate('/paths/~1things/get/operationId').refersTo).toBeUndefined();
  });

  it('takes Spectral paths (arrays) as well as pointers', () => {
    expect(at(['paths', '/things', 'get', 'operationId'])).toBe('paths/things.yaml:2:3');
  });

  it('points at the value instead of the key when asked', () => {
    expect(at('/paths/~1things/get/operationId', false)).toBe('paths/things.yaml:2:16');
  });

  it('round-trips pointer escapes', () => {
    expect(pointerSegments(toPointer(['paths', '/a/{b}', 'x~y']))).toEqual(['paths', '/a/{b}', 'x~y']);
    expect(pointerSegments('#/paths/~1a~1{b}')).toEqual(['paths', '/a/{b}']);
  });
});

describe('SourceMap.referrers and refKey', () => {
  const places = (found: { file: string; line: number; column: number }[]) =>
    found.map((f) => `${relative(dir, f.file)}:${f.line}:${f.column}`);

  it.each([
    // Thing.yaml: the `items` of a local component and a request body's schema; the root's
    // `components` entry only names it.
    [
      'components/schemas/Thing.yaml',
      '#/',
      ['components/bodies/NewThing.yaml:4:7', 'paths/things.yaml:22:7'],
    ],
    ['components/schemas/Orphan.yaml', '', ['paths/getThing.yaml:8:11']],
    // A fragment: used by Thing.yaml's property, named by the root's entry (which nothing uses).
    ['components/common.yaml', '#/Shared', ['components/schemas/Thing.yaml:6:5']],
    ['paths/things.yaml', '/components/local', ['paths/things.yaml:9:13']],
    ['components/common.yaml', '#/Other', []],
  ])('the `$ref`s using %s%s', (file, pointer, want) => {
    expect(places(map.referrers(join(dir, file), pointer)).sort()).toEqual(want);
  });

  it('finds the `$ref` key of a `$ref` node, not of an alias or of a plain value', () => {
    const key = (file: string, pointer: string) => {
      const found = map.refKey(join(dir, file), pointer);
      return found && places([found])[0];
    };
    expect(key('paths/things.yaml', '/post/parameters/0')).toBe('paths/things.yaml:13:7');
    expect(key('openapi.yaml', '/paths/~1things')).toBe('openapi.yaml:7:5');
    expect(key('openapi.yaml', '/components/schemas/Thing')).toBeUndefined();
    expect(key('paths/things.yaml', '/get/operationId')).toBeUndefined();
  });
});
