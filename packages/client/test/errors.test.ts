import { describe, expect, it } from 'vitest';
import { ApiError, createClient, unwrap } from '../src/index.js';
import { BASE, errorBody, fakeFetch, json } from './helpers.js';

function clientAnswering(answer: () => Response) {
  return createClient({ baseUrl: BASE, token: 't', fetch: fakeFetch(answer).fetch });
}

describe('error responses become ApiError', () => {
  it.each([
    [
      'the error envelope',
      () => json(404, errorBody('not_found', 'no such workspace', { resource: 'workspace' }, 'req_body')),
      {
        status: 404,
        code: 'not_found',
        message: 'no such workspace',
        details: { resource: 'workspace' },
        requestId: 'req_body',
        body: errorBody('not_found', 'no such workspace', { resource: 'workspace' }, 'req_body'),
      },
    ],
    [
      'an unknown code (design §12: tolerate it)',
      () => json(409, errorBody('brand_new_code', 'later')),
      { status: 409, code: 'brand_new_code', message: 'later' },
    ],
    [
      'Request-Id header when the envelope lacks request_id',
      () =>
        json(
          429,
          { error: { code: 'rate_limited', message: 'slow down', details: null } },
          { 'Retry-After': '3' },
        ),
      { status: 429, code: 'rate_limited', requestId: 'req_429', retryAfterMs: 3000 },
    ],
    [
      'a non-JSON body',
      () =>
        new Response('<html>Bad Gateway</html>', {
          status: 502,
          statusText: 'Bad Gateway',
          headers: { 'Request-Id': 'req_p' },
        }),
      {
        status: 502,
        code: 'unknown',
        message: 'HTTP 502 Bad Gateway: <html>Bad Gateway</html>',
        details: { body: '<html>Bad Gateway</html>' },
        requestId: 'req_p',
      },
    ],
    [
      'JSON that is not the envelope',
      () => json(500, { oops: true }),
      { status: 500, code: 'unknown', details: { body: '{"oops":true}' } },
    ],
    [
      'an empty body',
      () => new Response(null, { status: 500 }),
      { status: 500, code: 'unknown', message: 'HTTP 500', details: null, requestId: undefined },
    ],
  ])('%s', async (_name, answer, want) => {
    const err = await unwrap(clientAnswering(answer).GET('/me')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ name: 'ApiError', ...want });
  });

  it('leaves raw calls alone: {error, response} for the same failure', async () => {
    const { data, error, response } = await clientAnswering(() => json(404, errorBody('not_found'))).GET(
      '/me',
    );
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(error).toEqual(errorBody('not_found'));
  });
});

describe('unwrap on success', () => {
  it.each([
    [
      'a JSON body',
      () => json(200, { identity: { principal: { id: 'p' } } }),
      { identity: { principal: { id: 'p' } } },
    ],
    ['204 No Content', () => new Response(null, { status: 204 }), undefined],
  ])('returns %s', async (_name, answer, want) => {
    await expect(unwrap(clientAnswering(answer).GET('/me'))).resolves.toEqual(want);
  });
});
