// @vitest-environment happy-dom
// Nothing in @svc/react is re-typed from the spec: an operation added to a copy of the spec reaches the
// hooks (typed through the regenerated `paths`) and the MSW handlers (read from the new bundle) with no
// edit to this package. The copy is bundled as the spec's build does (redocly), typed by
// openapi-typescript, and a file that uses the new operation is type-checked against the built package.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createClient } from '@svc/client';
import type { OpenApiDocument } from '@svc/contract/browser';
import { bundleSpec } from '@svc/tools/spec-bundle';
import { QueryClient } from '@tanstack/react-query';
import { renderHook, waitFor } from '@testing-library/react';
import { setupServer } from 'msw/node';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHooks } from '../src/index.js';
import { createMock } from '../src/msw/index.js';
import { wrapperFor } from './support.js';

const run = promisify(execFile);
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const BASE = 'http://api.test/v1';

/** The new operation, written as an API designer would (CONTRIBUTING.md, "Add an operation"). */
const WIDGETS = `get:
  operationId: listWidgets
  summary: List widgets
  description: Widgets, newest first.
  tags:
  - catalog
  x-svc:
    permission: principal
  parameters:
  - $ref: ../../components/parameters/Limit.yaml
  - $ref: ../../components/parameters/Cursor.yaml
  responses:
    '200':
      description: A page of widgets.
      content:
        application/json:
          schema:
            type: object
            additionalProperties: false
            required: [widgets, next_cursor, has_more]
            properties:
              widgets:
                type: array
                items:
                  type: object
                  required: [id, label]
                  properties:
                    id: { type: string, description: The widget's id. }
                    label: { type: string, description: What it says. }
              next_cursor:
                $ref: ../../components/schemas/NextCursor.yaml
              has_more:
                $ref: ../../components/schemas/HasMore.yaml
          examples:
            one:
              summary: One widget
              value: { widgets: [{ id: w1, label: Sprocket }], next_cursor: null, has_more: false }
            two:
              summary: Two widgets
              value: { widgets: [{ id: w2, label: Cog }, { id: w1, label: Sprocket }], next_cursor: null, has_more: false }
    '401':
      $ref: ../../components/responses/Unauthenticated.yaml
`;

/** Uses the new operation through the package's public entries; compiles only if both follow the spec. */
const USAGE = `import { createClient } from '@svc/client';
import { createHooks, type DataOf } from '@svc/react';
import { createMock } from '@svc/react/msw';
import type { operations, paths } from './schema.js';

const api = createHooks(createClient<paths>({ baseUrl: 'http://api.test/v1', token: 't' }));
export const useWidgets = () => api.useQuery('/widgets', { params: { query: { limit: 10 } } });
export const useAllWidgets = () => api.useInfiniteQuery('/widgets');
export const label: DataOf<'get', '/widgets', paths>['widgets'][number]['label'] = 'Cog';
export const mock = createMock<paths, operations>({ baseUrl: 'http://api.test/v1', choose: { listWidgets: { example: 'two' } } });
export const unauthenticated = mock.answer('listWidgets', { status: 401 });
// @ts-expect-error 404 is not a status listWidgets documents
mock.answer('listWidgets', { status: 404 });
// @ts-expect-error the released spec has no /widgets: its hooks refuse the path
createHooks(createClient({ baseUrl: 'http://api.test/v1' })).useQuery('/widgets');
`;

let work: string;
let drift: string;
let document: OpenApiDocument;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-react-drift-'));
  const spec = join(work, 'spec');
  cpSync(here('../../../spec'), spec, {
    recursive: true,
    filter: (s) => !/[/\\](dist|node_modules)$/.test(s),
  });
  mkdirSync(join(spec, 'paths', 'widgets'));
  writeFileSync(join(spec, 'paths', 'widgets', 'widgets.yaml'), WIDGETS);
  const root = readFileSync(join(spec, 'openapi.yaml'), 'utf8');
  writeFileSync(
    join(spec, 'openapi.yaml'),
    root.replace(/^paths:\n/m, 'paths:\n  /widgets:\n    $ref: paths/widgets/widgets.yaml\n'),
  );
  document = bundleSpec(spec, join(work, 'openapi.json')) as OpenApiDocument;
  // Inside the package, so '@svc/react' resolves to the built package by its own name.
  drift = mkdtempSync(here('../.drift-'));
  writeFileSync(join(drift, 'schema.ts'), astToString(await openapiTS(document as never)));
  writeFileSync(join(drift, 'usage.ts'), USAGE);
  writeFileSync(
    join(drift, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../../tsconfig.base.json',
      compilerOptions: { noEmit: true, declaration: false, declarationMap: false },
      include: ['*.ts'],
    }),
  );
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  if (drift) rmSync(drift, { recursive: true, force: true });
});

describe('an operation added to a copy of the spec', () => {
  it('is typed in the hooks and the handlers (the usage type-checks, the old spec refuses it)', async () => {
    const tsc = here('../node_modules/.bin/tsc');
    await expect(run(tsc, ['-p', join(drift, 'tsconfig.json')]).then(() => 'ok')).resolves.toBe('ok');
  }, 120_000);

  it('is answered by the handlers and fetched by the hooks, with no edit to @svc/react', async () => {
    const mock = createMock({
      baseUrl: BASE,
      document,
      choose: { listWidgets: { example: 'two' } } as never,
    });
    expect(mock.handlers).toHaveLength(
      Object.values(document.paths)
        .flatMap((p) => Object.keys(p))
        .filter((m) => m !== 'parameters').length,
    );
    const server = setupServer(...mock.handlers);
    server.listen({ onUnhandledRequest: 'error' });
    try {
      const api = createHooks(
        createClient<Record<string, unknown>>({ baseUrl: BASE, token: 't' }) as never,
      ) as unknown as {
        useQuery: (path: string) => { data?: unknown; isSuccess: boolean };
      };
      const { result } = renderHook(() => ({ ...api.useQuery('/widgets') }), {
        wrapper: wrapperFor(new QueryClient()),
      });
      await waitFor(() => expect(result.current.isSuccess).toBe(true));
      expect(result.current.data).toEqual({
        widgets: [
          { id: 'w2', label: 'Cog' },
          { id: 'w1', label: 'Sprocket' },
        ],
        next_cursor: null,
        has_more: false,
      });
      const refused = await fetch(`${BASE}/widgets`);
      expect(refused.status).toBe(401);
    } finally {
      server.close();
    }
  });
});
