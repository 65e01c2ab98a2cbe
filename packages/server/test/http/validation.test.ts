import { operationParameters, requestBody } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import { IncomingBytes } from '../../src/http/byte-body.js';
import { compileValidator, isJson } from '../../src/http/validation.js';
import { document, operations, resolve } from './fixtures.js';

const validator = compileValidator(document);
const bytes = (value: unknown) =>
  new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
const json = { 'content-type': 'application/json', 'idempotency-key': 'k-1' };

/** What a test sends: the router's path parameters and the parts of a `Request`. */
interface Given {
  pathParams: Record<string, string>;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer> | undefined;
}
const parts = (over: Partial<Given> = {}): Given => ({
  pathParams: over.pathParams ?? { workspace: 'acme-dev' },
  query: over.query ?? new URLSearchParams(),
  headers: over.headers ?? json,
  body: over.body,
});
/** Validates through the one path the pipeline uses; the URL's path is the router's business, not this. */
const check = (operationId: Parameters<typeof validator.validateRequest>[0], given: Given) => {
  const query = given.query.size ? `?${given.query}` : '';
  const init: RequestInit = { method: 'POST', headers: given.headers };
  if (given.body) init.body = given.body;
  return validator.validateRequest(operationId, new Request(`http://x/v1/x${query}`, init), given.pathParams);
};
const computer = { name: 'build-runner-1', size: 'small', image: 'ubuntu-2404' };

describe('request validation', () => {
  it.each([
    [
      'unknown body field',
      'createComputer',
      parts({ body: bytes({ ...computer, colour: 'red' }) }),
      'colour',
    ],
    [
      'bad label value',
      'createComputer',
      parts({ body: bytes({ ...computer, labels: { env: 'Prod!' } }) }),
      'labels.env',
    ],
    [
      'bad label key',
      'createComputer',
      parts({ body: bytes({ ...computer, labels: { 'Bad Key': 'x' } }) }),
      'labels.Bad Key',
    ],
    ['missing body field', 'createComputer', parts({ body: bytes({ name: 'x', image: 'busybox' }) }), 'size'],
    ['wrong body type', 'createComputer', parts({ body: bytes([computer]) }), 'body'],
    ['required body left out', 'createComputer', parts(), 'body'],
    ['limit below 1', 'listWorkspaces', parts({ query: new URLSearchParams('limit=0') }), 'query.limit'],
    [
      'limit not an integer',
      'listWorkspaces',
      parts({ query: new URLSearchParams('limit=1.5') }),
      'query.limit',
    ],
    [
      'limit above int32',
      'listWorkspaces',
      parts({ query: new URLSearchParams('limit=2147483648') }),
      'query.limit',
    ],
    [
      'repeated scalar query parameter',
      'listWorkspaces',
      parts({ query: new URLSearchParams('limit=5&limit=6') }),
      'query.limit',
    ],
    [
      'boolean not true/false',
      'listComputers',
      parts({ query: new URLSearchParams('include_deleted=1') }),
      'query.include_deleted',
    ],
    ['enum filter', 'listComputers', parts({ query: new URLSearchParams('state=asleep') }), 'query.state'],
    [
      'wait above 60',
      'getOperation',
      parts({
        pathParams: { operation: '01m6ddfps70g9sk0sar56ypyzq2' },
        query: new URLSearchParams('wait=61'),
      }),
      'query.wait',
    ],
    [
      'path parameter pattern',
      'getWorkspace',
      parts({ pathParams: { workspace: 'Acme_Dev' } }),
      'path.workspace',
    ],
    ['path id pattern', 'getOperation', parts({ pathParams: { operation: 'not-an-id' } }), 'path.operation'],
    [
      'idempotency key not printable',
      'createWorkspace',
      parts({ headers: { ...json, 'idempotency-key': 'é' }, body: bytes({ name: 'acme-dev' }) }),
      'header.Idempotency-Key',
    ],
  ] as const)('%s → invalid_argument at the exact field', async (_, operationId, given, field) => {
    const result = await check(operationId, given);
    expect(result).toMatchObject({ ok: false, kind: 'invalid_argument' });
    if (result.ok) return;
    expect(result.violations.map((v) => v.field)).toContain(field);
    for (const v of result.violations) expect(v.description).not.toBe('');
  });

  it('reports every violation of a request at once', async () => {
    const result = await check(
      'createComputer',
      parts({
        pathParams: { workspace: 'BAD' },
        body: bytes({ name: 'x', size: 1, image: 'i', extra: true }),
      }),
    );
    expect(result.ok ? [] : result.violations.map((v) => v.field).sort()).toEqual([
      'extra',
      'path.workspace',
      'size',
    ]);
  });

  it.each(operations.filter((op) => resolveIdempotency(op) === true).map((op) => [op.operationId]))(
    '%s without Idempotency-Key → idempotency_key_required',
    async (operationId) => {
      const result = await check(
        operationId as never,
        parts({ headers: { 'content-type': 'application/json' }, body: bytes({}) }),
      );
      expect(result).toMatchObject({ ok: false, kind: 'idempotency_key_required' });
    },
  );

  it('the create operations found above are the spec’s creates', () => {
    const creates = operations.filter((op) => resolveIdempotency(op) === true).map((op) => op.operationId);
    expect(creates).toEqual(expect.arrayContaining(['createWorkspace', 'createComputer', 'createKey']));
    expect(validator.shape('createComputer')).toMatchObject({
      idempotencyKey: 'required',
      requestBody: 'required',
    });
    expect(validator.shape('updateComputer')).toMatchObject({ idempotencyKey: 'optional' });
  });

  it.each([
    ['broken JSON', '{"name": ', 'invalid_request'],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), 'invalid_request'],
  ] as const)('%s → %s', async (_, body, kind) => {
    const result = await check(
      'createWorkspace',
      parts({ body: typeof body === 'string' ? bytes(body) : body }),
    );
    expect(result).toMatchObject({ ok: false, kind });
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form', 'application/x-www-form-urlencoded'],
    ['json with latin1 charset', 'application/json; charset=iso-8859-1'],
    ['json lookalike', 'application/jsonx'],
  ])('content type %s → unsupported_media_type', async (_, contentType) => {
    const result = await check(
      'createWorkspace',
      parts({ headers: { ...json, 'content-type': contentType }, body: bytes({ name: 'acme-dev' }) }),
    );
    expect(result).toMatchObject({ ok: false, kind: 'unsupported_media_type' });
  });

  it('a body without Content-Type → unsupported_media_type', async () => {
    const result = await check(
      'createWorkspace',
      parts({ headers: { 'idempotency-key': 'k' }, body: bytes({ name: 'acme-dev' }) }),
    );
    expect(result).toMatchObject({ ok: false, kind: 'unsupported_media_type' });
  });

  it.each([['application/json'], ['Application/JSON; charset=UTF-8'], ['application/json;charset="utf-8"']])(
    'accepts %s',
    (ct) => {
      expect(isJson(ct)).toBe(true);
    },
  );

  it('coerces query values and fills schema defaults', async () => {
    const result = await check(
      'listComputers',
      parts({ query: new URLSearchParams('limit=500&include_deleted=true&unknown=1') }),
    );
    expect(result).toEqual({
      ok: true,
      params: { workspace: 'acme-dev' },
      query: { limit: 500, include_deleted: true }, // 500 passes: the server clamps to 200, validation only checks the schema
      headers: {},
      body: undefined,
    });
    const defaults = await check('listComputers', parts());
    expect(defaults.ok && defaults.query).toEqual({ limit: 50, include_deleted: false });
  });

  it('an optional body may be left out, and is checked when sent', async () => {
    const path = { workspace: 'acme-dev', service_account: 'ci-deployer' };
    expect(
      await check('createKey', parts({ pathParams: path, headers: { 'idempotency-key': 'k' } })),
    ).toMatchObject({ ok: true, body: undefined });
    expect(
      await check('createKey', parts({ pathParams: path, body: bytes({ algorithm: 'RSA' }) })),
    ).toMatchObject({
      ok: false,
      violations: [{ field: 'algorithm' }],
    });
  });

  it('passes the spec’s own request examples', async () => {
    for (const op of operations) {
      const media = requestBody(document, op)?.content['application/json'] as
        | { examples?: Record<string, unknown> }
        | undefined;
      for (const example of Object.values(media?.examples ?? {})) {
        const params = Object.fromEntries(
          op.path.match(/\{[^}]+\}/g)?.map((p) => [p.slice(1, -1), 'acme-dev']) ?? [],
        );
        for (const key of ['member', 'key', 'operation', 'webhook_endpoint', 'delivery', 'terminal'])
          if (key in params) params[key] = '01m6ddfps70g9sk0sar56ypyzq2';
        const result = await check(
          op.operationId as never,
          parts({ pathParams: params, body: bytes(resolve(example).value) }),
        );
        expect(result, op.operationId).toMatchObject({ ok: true });
      }
    }
  });

  it('validateRequest reads the body with the 1 MiB cap', async () => {
    const big = `{"name":"${'a'.repeat(MAX_BODY_BYTES)}"}`;
    const request = new Request('http://x/v1/workspaces', { method: 'POST', headers: json, body: big });
    expect(await validator.validateRequest('createWorkspace', request, {})).toEqual({
      ok: false,
      kind: 'payload_too_large',
      violations: [],
    });
    const ok = new Request('http://x/v1/workspaces?limit=1', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'acme-dev' }),
    });
    expect(await validator.validateRequest('createWorkspace', ok, {})).toMatchObject({
      ok: true,
      body: { name: 'acme-dev' },
      headers: { 'Idempotency-Key': 'k-1' },
    });
  });
});

describe('response validation', () => {
  const workspace = {
    id: '01m6bxdm0dxxxstsc03qpv3hzmd',
    name: 'acme-dev',
    display_name: 'Acme',
    created_at: '2026-11-02T09:05:00Z',
    updated_at: '2026-11-02T09:05:00Z',
  };
  const headers = new Headers({
    'request-id': '01m6bxdm0dxxxstsc03qpv3hzmd',
    ratelimit: '"principal";r=599;t=60',
    'ratelimit-policy': '"principal";q=600;w=60',
    'access-control-allow-origin': '*',
    location: '/v1/workspaces/01m6bxdm0dxxxstsc03qpv3hzmd',
  });

  it('accepts a conforming response', () => {
    expect(validator.validateResponse('createWorkspace', 201, { workspace }, headers)).toEqual([]);
    expect(validator.validateResponse('deleteWorkspace', 204, undefined)).toEqual([]);
  });

  it.each([
    ['an extra field', 201, { workspace: { ...workspace, secret: 'x' } }, 'body.workspace.secret'],
    ['a missing field', 201, { workspace: { ...workspace, name: undefined } }, 'body.workspace.name'],
    [
      'a bad timestamp',
      201,
      { workspace: { ...workspace, created_at: 'yesterday' } },
      'body.workspace.created_at',
    ],
    ['no envelope', 201, workspace, 'body.id'],
    ['an undocumented status', 418, { workspace }, 'status'],
    [
      'an error with a bad request_id',
      409,
      { error: { code: 'already_exists', message: 'taken', details: {}, request_id: 'x' } },
      'body.error.request_id',
    ],
  ])('catches %s', (_, status, body, field) => {
    const violations = validator.validateResponse(
      'createWorkspace',
      status,
      JSON.parse(JSON.stringify(body)),
      headers,
    );
    expect(violations.map((v) => v.field)).toContain(field);
  });

  it('catches a missing required header and a body on 204', () => {
    const without = new Headers(headers);
    without.delete('location');
    expect(validator.validateResponse('createWorkspace', 201, { workspace }, without)).toEqual([
      { field: 'header.Location', description: 'is required' },
    ]);
    expect(validator.validateResponse('deleteWorkspace', 204, { ok: true })).toEqual([
      { field: 'body', description: '204 has no documented body' },
    ]);
  });
});

function resolveIdempotency(op: (typeof operations)[number]): boolean | undefined {
  const header = operationParameters(document, op).find(
    (p) => p.in === 'header' && p.name === 'Idempotency-Key',
  );
  return header ? header.required === true : undefined;
}

describe('bodies of bytes (byteRequestBody)', () => {
  const upload = (headers: Record<string, string>, body?: BodyInit) =>
    new Request('http://x/v1/workspaces/acme/computers/web-1/files?path=%2Fhome%2Fsvc%2Fa', {
      method: 'PUT',
      headers,
      ...(body === undefined ? {} : { body }),
    });
  const params = { workspace: 'acme', computer: 'web-1' };
  const limited = compileValidator(document, MAX_BODY_BYTES, { maxByteBodyBytes: 10 });

  it('hands the body on unread, as a stream that counts past the 1 MiB JSON limit', async () => {
    const big = new Uint8Array(MAX_BODY_BYTES + 1).fill(7);
    const checked = await validator.validateRequest(
      'uploadComputerFile',
      upload({ 'content-type': 'application/octet-stream' }, big),
      params,
    );
    expect(checked.ok).toBe(true);
    const body = (checked as { body: IncomingBytes }).body;
    expect(body).toBeInstanceOf(IncomingBytes);
    expect(body.bytesRead).toBe(0);
    body.hashBytes(); // as an upload with an Idempotency-Key does
    expect((await new Response(body.stream).arrayBuffer()).byteLength).toBe(MAX_BODY_BYTES + 1);
    expect(body.ended).toBe(true);
    expect(body.sha256()).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['no Content-Type', {}],
    ['JSON', { 'content-type': 'application/json' }],
    ['a tar for a file', { 'content-type': 'application/x-tar' }],
    ['an encoded body', { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' }],
  ])('415 for %s', async (_name, headers) => {
    const checked = await validator.validateRequest('uploadComputerFile', upload(headers, 'x'), params);
    expect(checked).toMatchObject({ ok: false, kind: 'unsupported_media_type' });
  });

  it('413 with limit_bytes when Content-Length is over the lower of x-svc-max-bytes and the setting', async () => {
    const checked = await limited.validateRequest(
      'uploadComputerFile',
      upload({ 'content-type': 'application/octet-stream', 'content-length': '11' }),
      params,
    );
    expect(checked).toMatchObject({
      ok: false,
      kind: 'payload_too_large',
      details: { limit_bytes: 10 },
      headers: { connection: 'close' },
    });
  });

  it('a body longer than it said, or of no said length, errors past the limit while read', async () => {
    const checked = await limited.validateRequest(
      'uploadComputerArchive',
      upload({ 'content-type': 'application/x-tar' }, new Uint8Array(11)),
      params,
    );
    const body = (checked as { body: IncomingBytes }).body;
    await expect(new Response(body.stream).arrayBuffer()).rejects.toThrow(/larger than 10 bytes/);
    expect(body.overLimit).toBe(true);
  });
});
