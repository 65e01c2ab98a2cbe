// tools/spec-source-map.mjs on a throwaway tree: `$ref`s to whole files, to fragments of files and
// within a file, components that only the bundle names, and pointers past what the sources hold.
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
components:
  local:
    type: array
    items:
      $ref: ../components/schemas/Thing.yaml
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
