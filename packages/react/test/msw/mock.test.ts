import { createClient, unwrap } from '@svc/client';
import { listOperations, operationResponses } from '@svc/contract/browser';
import { HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answerText } from '../../src/msw/examples.js';
import { BUNDLED_DOCUMENT, createMock, exampleAnswer } from '../../src/msw/index.js';

const BASE = 'http://api.test/v1';
const mock = createMock({ baseUrl: BASE });
const server = setupServer(...mock.handlers);
const client = createClient({ baseUrl: BASE, token: 'any' });
const document = BUNDLED_DOCUMENT;
const operations = listOperations(document);

/** A raw request for an operation, its path parameters filled with `x`, with a bearer token. */
function requestFor(op: (typeof operations)[number], headers: Record<string, string> = {}) {
  const path = op.path.replaceAll(/\{[^}]+\}/g, 'x');
  const body = ['post', 'put', 'patch'].includes(op.method) ? '{}' : undefined;
  return fetch(`${BASE}${path}`, {
    method: op.method.toUpperCase(),
    headers: { Authorization: 'Bearer any', 'Content-Type': 'application/json', ...headers },
    body,
  });
}

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

describe('the example handlers', () => {
  it('handle every operation of the spec, answering its first success example', async () => {
    expect(mock.handlers).toHaveLength(operations.length);
    for (const op of operations) {
      const response = await requestFor(op);
      const want = exampleAnswer(document, op.operationId);
      expect({ op: op.operationId, status: response.status }).toEqual({
        op: op.operationId,
        status: want.status,
      });
      if (want.body === undefined) continue;
      if (want.headers['Content-Type'] === 'application/json')
        expect(await response.json()).toEqual(want.body);
      // An event stream in the SSE wire format, bytes as the example's string.
      else expect(await response.text()).toBe(answerText(want));
    }
  });

  it('answer every documented error status of every operation, with its first example', async () => {
    let checked = 0;
    for (const op of operations) {
      for (const { status } of operationResponses(document, op).filter((r) => /^[45]/.test(r.status))) {
        server.use(mock.answer(op.operationId as 'getMe', { status: Number(status) as 401 }, { once: true }));
        const response = await requestFor(op);
        expect(`${op.operationId} ${response.status}`).toBe(`${op.operationId} ${status}`);
        const body = (await response.json()) as { error: { code: string } };
        expect(body).toEqual(exampleAnswer(document, op.operationId, { status: Number(status) }).body);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(250);
  });

  it('give the 202 headers the spec requires: Location and Retry-After', async () => {
    const { response } = await client.POST('/workspaces/{workspace}/computers/{computer}/stop', {
      params: { path: { workspace: 'acme-dev', computer: 'build-runner-1' } },
    });
    expect(response.status).toBe(202);
    expect(response.headers.get('Location')).toMatch(/^\/v1\/operations\/[0-9a-z]{27}$/);
    expect(response.headers.get('Retry-After')).toBe('1');
  });

  it('choose another example, per operation or per test', async () => {
    const chosen = createMock({ baseUrl: BASE, choose: { getComputer: { example: 'creating' } } });
    server.use(...chosen.handlers);
    const read = () =>
      unwrap(
        client.GET('/workspaces/{workspace}/computers/{computer}', {
          params: { path: { workspace: 'w', computer: 'c' } },
        }),
      );
    expect((await read()).computer.state).toBe('creating');
    server.use(mock.answer('getComputer', { example: 'deleted' }, { once: true }));
    expect((await read()).computer.state).toBe('deleted');
    expect((await read()).computer.state).toBe('creating');
  });

  it('refuse a status or an example the spec does not document, naming what it has', () => {
    expect(() => mock.answer('getMe', { status: 404 as 401 })).toThrow(
      /getMe documents no 404 answer; it documents 200, 401, 429, 500, 503/,
    );
    expect(() => mock.answer('getComputer', { example: 'exploded' })).toThrow(
      /its examples: running, creating, deleted/,
    );
  });

  it('wait the delay chosen', async () => {
    server.use(mock.answer('getHealth', { delay: 150 }, { once: true }));
    const started = performance.now();
    await unwrap(client.GET('/health'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('take a one-off handler of your own, typed by the spec (openapi-msw)', async () => {
    server.use(
      mock.http.get('/workspaces/{workspace}', ({ params, response }) =>
        response(200).json({
          workspace: {
            id: '01m6bxdm0dxxxstsc03qpv3hzmd',
            name: params.workspace,
            display_name: 'Mine',
            created_at: '2026-11-02T09:05:00Z',
            updated_at: '2026-11-02T09:05:00Z',
          },
        }),
      ),
    );
    const { workspace } = await unwrap(
      client.GET('/workspaces/{workspace}', { params: { path: { workspace: 'mine' } } }),
    );
    expect(workspace).toMatchObject({ name: 'mine', display_name: 'Mine' });
    server.use(mock.http.untyped.get(`${BASE}/me`, () => HttpResponse.json({ nope: true }, { status: 418 })));
    expect((await client.GET('/me')).response.status).toBe(418);
  });

  it('refuse a request without a bearer token (401), and read Prism’s Prefer header', async () => {
    const anonymous = createClient({ baseUrl: BASE });
    const { response, error } = await anonymous.GET('/me');
    expect(response.status).toBe(401);
    expect(error?.error.code).toBe('unauthenticated');
    expect((await anonymous.GET('/health')).response.status).toBe(200); // security: [] in the spec
    const preferred = await client.GET('/workspaces/{workspace}/computers/{computer}', {
      params: { path: { workspace: 'w', computer: 'c' } },
      headers: { Prefer: 'code=404' },
    });
    expect(preferred.response.status).toBe(404);
    expect(preferred.error?.error.code).toBe('not_found');
  });
});
