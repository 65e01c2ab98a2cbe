import { describe, expect, it, vi } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import type { HandlerContext } from '../../src/http/context.js';
import { createHttpCore } from '../../src/http/pipeline.js';
import { compileRouter } from '../../src/http/router.js';
import { compileValidator } from '../../src/http/validation.js';
import type { Principal } from '../../src/identity/auth/authenticate.js';
import { newRequestId } from '../../src/platform/request-id.js';
import { document, resolve } from './fixtures.js';

const router = compileRouter(document);
const validator = compileValidator(document);
const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;
const handle = vi.fn((ctx: HandlerContext) => ctx.json(200, { seen: ctx.operationId, input: ctx.input }));
const core = createHttpCore({ document, router, validator, handle });
const call = (path: string, init?: RequestInit) => core(new Request(`http://localhost${path}`, init));
const create = { 'content-type': 'application/json', 'idempotency-key': 'k-1' };

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as {
    error: { code: string; request_id: string; details: Record<string, unknown> };
  };
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toMatch(ID);
  expect(response.headers.get('request-id')).toBe(body.error.request_id);
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  return body.error;
}

describe('http core', () => {
  it.each([
    ['unknown route', '/v1/nope', undefined, 404, 'not_found'],
    ['outside /v1', '/me', undefined, 404, 'not_found'],
    ['malformed escape', '/v1/workspaces/%zz', undefined, 400, 'invalid_argument'],
    [
      'broken JSON',
      '/v1/workspaces',
      { method: 'POST', headers: create, body: '{"name":' },
      400,
      'invalid_request',
    ],
    [
      'wrong content type',
      '/v1/workspaces',
      { method: 'POST', headers: { ...create, 'content-type': 'text/plain' }, body: 'acme' },
      415,
      'unsupported_media_type',
    ],
    [
      '1 MiB + 1 byte',
      '/v1/workspaces',
      { method: 'POST', headers: create, body: ' '.repeat(MAX_BODY_BYTES + 1) },
      413,
      'payload_too_large',
    ],
    [
      'no Idempotency-Key on a create',
      '/v1/workspaces',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"a"}' },
      400,
      'idempotency_key_required',
    ],
    ['repeated scalar query parameter', '/v1/workspaces?limit=1&limit=2', undefined, 400, 'invalid_argument'],
  ] as const)('%s → %i %s, before any handler runs', async (_, path, init, status, code) => {
    handle.mockClear();
    await expectError(await call(path, init as RequestInit | undefined), status, code);
    expect(handle).not.toHaveBeenCalled();
  });

  it('names the field in invalid_argument details', async () => {
    const error = await expectError(await call('/v1/workspaces?limit=0'), 400, 'invalid_argument');
    expect(error.details).toEqual({
      field_violations: [{ field: 'query.limit', description: 'must be >= 1' }],
    });
  });

  it('405 carries Allow derived from the spec', async () => {
    const response = await call('/v1/me', { method: 'DELETE' });
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    await expectError(response, 405, 'method_not_allowed');
  });

  it('passes validated input to the handler and stamps Request-Id and CORS', async () => {
    const response = await call('/v1/workspaces/acme-dev/computers?limit=7', {
      headers: { origin: 'https://app.example' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(ID);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')?.split(', ')).toEqual(
      expect.arrayContaining([
        'Request-Id',
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
        'Location',
        'Idempotent-Replayed',
      ]),
    );
    expect(await response.json()).toMatchObject({
      seen: 'listComputers',
      input: { params: { workspace: 'acme-dev' }, query: { limit: 7, include_deleted: false } },
    });
  });

  it('answers a preflight with 204 and what the browser may send', async () => {
    const response = await call('/v1/workspaces', {
      method: 'OPTIONS',
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, HEAD, OPTIONS');
    const allowed = response.headers.get('access-control-allow-headers')?.split(', ');
    expect(allowed).toEqual(expect.arrayContaining(['Authorization', 'Content-Type', 'Idempotency-Key']));
    expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect((await call('/v1/nope', { method: 'OPTIONS' })).status).toBe(404);
  });

  it('HEAD runs the GET operation without a body', async () => {
    const response = await call('/v1/me', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('turns a thrown error into 500 internal without detail', async () => {
    const failing = createHttpCore({
      document,
      router,
      validator,
      handle: () => {
        throw new Error('SELECT secret FROM x');
      },
    });
    const response = await failing(new Request('http://localhost/v1/me'));
    const error = await expectError(response, 500, 'internal');
    expect(JSON.stringify(error)).not.toContain('SELECT');
  });

  it('reports a response that breaks the spec (dev and test mode)', async () => {
    const report = vi.fn();
    const lying = createHttpCore({
      document,
      router,
      validator,
      handle: (ctx) => ctx.json(200, { identity: { name: 42 } }),
      onResponseViolation: report,
    });
    await lying(new Request('http://localhost/v1/me'));
    expect(report).toHaveBeenCalledOnce();
    const violations = report.mock.calls[0]?.[2] as { field: string }[];
    expect(violations.map((v) => v.field)).toEqual(
      expect.arrayContaining(['body.identity.principal', 'header.RateLimit']),
    );
  });

  it('a handler can answer with the spec’s example and nothing is reported', async () => {
    const report = vi.fn();
    const media = resolve(
      (document.paths['/me'] as Record<string, Record<string, Record<string, unknown>>>).get?.responses?.[
        '200'
      ],
    ).content as Record<string, { examples: Record<string, { value: unknown }> }>;
    const example = Object.values(media['application/json']?.examples ?? {})[0]?.value;
    const honest = createHttpCore({
      document,
      router,
      validator,
      onResponseViolation: report,
      handle: (ctx) => {
        ctx.headers.ratelimit = '"principal";r=599;t=60';
        ctx.headers['ratelimit-policy'] = '"principal";q=600;w=60';
        return ctx.json(200, example);
      },
    });
    expect((await honest(new Request('http://localhost/v1/me'))).status).toBe(200);
    expect(report).not.toHaveBeenCalled();
  });
});

describe('request ids', () => {
  it('have the id format, are unique and sort by creation', () => {
    const ids = Array.from({ length: 1000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(ID);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('authenticate hook', () => {
  const seen: string[] = [];
  const caller: Principal = { id: 'p-1', kind: 'user', name: 'ada', display_name: 'Ada', email: null };
  const guarded = createHttpCore({
    document,
    router,
    validator,
    handle: (ctx) => ctx.json(200, { principal: ctx.get('principal')?.id }),
    authenticate: (c) => {
      seen.push(c.operationId);
      if (c.request.headers.get('authorization') !== 'Bearer ok')
        return c.error('unauthenticated', 'no credential');
      c.set('principal', caller);
      return undefined;
    },
  });
  const send = (path: string, init?: RequestInit) => guarded(new Request(`http://localhost${path}`, init));

  it.each([
    ['an invalid body', '/v1/workspaces', { method: 'POST', headers: create, body: '{"name":5}' }],
    ['broken JSON', '/v1/workspaces', { method: 'POST', headers: create, body: '{' }],
    [
      'a wrong content type',
      '/v1/workspaces',
      { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' },
    ],
    ['a malformed path', '/v1/workspaces/%zz', undefined],
    ['an invalid query', '/v1/workspaces?limit=-1', undefined],
  ])('answers before validation: %s', async (_name, path, init) => {
    await expectError(await send(path, init), 401, 'unauthenticated');
  });

  it('passes what it learned to the handler, and does not run for unknown routes', async () => {
    seen.length = 0;
    const ok = await send('/v1/workspaces', { headers: { authorization: 'Bearer ok' } });
    expect(await ok.json()).toEqual({ principal: 'p-1' });
    await expectError(await send('/v1/nope'), 404, 'not_found');
    expect(seen).toEqual(['listWorkspaces']);
  });
});
