// `pnpm mock` and the snapshots (design §4.2): the four operations of the tag `snapshots` are JSON, so
// the front passes them to Prism, which answers each with its example, valid against its schema; a
// create answers 202 with the snapshot and its `computer.snapshot` operation. A computer create names
// a snapshot instead of an image.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startMock } from '../spec-mock.mjs';

const bundlePath = fileURLToPath(new URL('../../spec/dist/openapi.json', import.meta.url));
// biome-ignore lint/suspicious/noExplicitAny: the bundle is walked as plain JSON
type Json = any;
const bundle: Json = JSON.parse(readFileSync(bundlePath, 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** Every path parameter gets one id (ids fit the name pattern too). */
const ID = '01m6qa0v8d3r5k1tcx9jz2wy4hn';

const local = (node: { $ref?: string } | undefined) =>
  node?.$ref
    ? node.$ref
        .slice(2)
        .split('/')
        .reduce((at: Json, key: string) => at?.[key], bundle)
    : node;

/** The snapshot operations, read from the bundle: the operations tagged `snapshots`. */
const operations = Object.entries(bundle.paths).flatMap(([path, item]: [string, Json]) =>
  METHODS.filter((m) => item[m]?.tags?.includes('snapshots')).map((method) => {
    const op = item[method];
    const success = Object.keys(op.responses).find((s) => /^2/.test(s)) ?? '';
    const media = local(op.requestBody)?.content?.['application/json'];
    const example = media?.examples ? Object.values<Json>(media.examples)[0]?.value : undefined;
    const schema = local(op.responses[success])?.content?.['application/json']?.schema;
    const body = media === undefined ? undefined : (example ?? {});
    return { id: op.operationId as string, method, path, success: Number(success), body, schema };
  }),
);

describe('pnpm mock: snapshots', { timeout: 120_000 }, () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ components: bundle.components }, 'bundle');
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${mock.url}${path.replace(/\{[a-z_]+\}/g, ID)}`, {
      method: method.toUpperCase(),
      headers: {
        authorization: 'Bearer anything',
        'idempotency-key': 'mock-snapshots-1',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  beforeAll(async () => {
    mock = await startMock({
      bundle: bundlePath,
      port: await freePort(),
      flags: ['--errors'],
      stdio: 'pipe',
    });
  }, 120_000);
  afterAll(async () => {
    await mock?.stop();
  });

  it('are the four operations of the tag', () => {
    expect(operations.map((o) => o.id).sort()).toEqual(
      ['createSnapshot', 'deleteSnapshot', 'getSnapshot', 'listSnapshots'].sort(),
    );
  });

  it.each(operations)('$id answers its success status, with a body valid against its schema', async (op) => {
    const response = await call(op.method, op.path, op.body);
    expect(response.status, await response.clone().text()).toBe(op.success);
    if (op.schema === undefined) return;
    const validate = ajv.compile({ $ref: `bundle#${String(op.schema.$ref ?? '').slice(1)}` });
    const body = await response.json();
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  });

  it('create answers 202 with the snapshot (creating) and its computer.snapshot operation as Location', async () => {
    const create = operations.find((o) => o.id === 'createSnapshot');
    const response = await call('post', String(create?.path), create?.body);
    expect(response.status).toBe(202);
    const { snapshot, operations: started } = await response.json();
    expect(snapshot.state).toBe('creating');
    expect(started[0]).toMatchObject({ type: 'computer.snapshot', target: { type: 'computer' } });
    expect(response.headers.get('location')).toMatch(/^\/v1\/operations\/[0-9a-z]{27}$/);
  });

  it('a computer create may name a snapshot instead of an image', async () => {
    const response = await call('post', '/workspaces/{workspace}/computers', {
      name: 'from-snapshot',
      size: 'small',
      snapshot: 'build-cache-1',
    });
    expect(response.status).toBe(202);
  });
});
