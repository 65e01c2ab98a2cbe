import { loadDocument } from '@svc/contract';
import { describe, expect, test } from 'vitest';
import { RequestContext } from '../src/http/context.js';
import { AuthError } from '../src/identity/auth/errors.js';
import {
  ApiError,
  ERROR_STATUS,
  errorResponse,
  invalidArgument,
  toApiError,
} from '../src/platform/errors.js';

describe('the status of each error code', () => {
  const schema = loadDocument().components?.schemas?.ErrorCode as { enum: string[]; description: string };
  // The spec documents each code's status in the schema's description: `| \`code\` | 409 | when |`.
  const documented = Object.fromEntries(
    [...schema.description.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  );

  test('every code of the spec has a status here, and every code here is in the spec', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual([...schema.enum].sort());
  });

  test('the status of each code is the one the spec documents', () => {
    expect(Object.keys(documented).sort()).toEqual([...schema.enum].sort());
    expect(ERROR_STATUS).toEqual(documented);
  });

  test('the error responder takes its status from the code', async () => {
    const c = new RequestContext(new Request('http://localhost/v1/me'));
    for (const code of schema.enum as (keyof typeof ERROR_STATUS)[]) {
      const response = c.error(code, 'message');
      expect([code, response.status]).toEqual([code, documented[code]]);
      expect((await response.json()).error).toMatchObject({ code, request_id: c.requestId });
    }
  });
});

describe('toApiError', () => {
  const sqlError = Object.assign(
    new Error('duplicate key value violates unique constraint "computers_live_name"'),
    { code: '23505' },
  );
  test.each([
    ['an ApiError stays itself', new ApiError('not_found', 'gone'), 404, 'not_found', 'gone'],
    ['a unique violation', sqlError, 409, 'already_exists', 'a resource with that name already exists'],
    [
      'a deadlock',
      Object.assign(new Error('deadlock detected'), { code: '40P01' }),
      503,
      'unavailable',
      'the service is briefly unavailable; retry shortly',
    ],
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      503,
      'unavailable',
      'the service is briefly unavailable; retry shortly',
    ],
    [
      'a syntax error in SQL',
      Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' }),
      500,
      'internal',
      'internal error',
    ],
    [
      'a TypeError',
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      500,
      'internal',
      'internal error',
    ],
    ['a thrown string', 'oops', 500, 'internal', 'internal error'],
  ])('%s', (_name, thrown, status, code, message) => {
    const error = toApiError(thrown);
    expect([error.status, error.code, error.message]).toEqual([status, code, message]);
    if (!(thrown instanceof ApiError)) expect(error.cause).toBe(thrown);
  });
});

describe('errorResponse', () => {
  test('the published envelope, Request-Id, the error headers, and nothing of the cause', async () => {
    const cause = Object.assign(
      new Error('relation "secrets" does not exist\n    at Parser.parseErrorMessage'),
      { code: '42P01' },
    );
    const response = errorResponse(cause, 'req-1');
    expect(response.status).toBe(500);
    expect(response.headers.get('request-id')).toBe('req-1');
    expect(response.headers.get('content-type')).toBe('application/json');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: 'internal', message: 'internal error', details: {}, request_id: 'req-1' },
    });
    expect(text).not.toMatch(/secrets|Parser|at |42P01/);
  });

  test('401 carries WWW-Authenticate', () => {
    const response = errorResponse(new AuthError('expired', 'the access token has expired'), 'r');
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([
      401,
      'Bearer error="invalid_token"',
    ]);
  });

  test('invalidArgument lists field violations', () => {
    expect(
      invalidArgument([{ field: 'name', description: 'has the form of an id' }]).toEnvelope('r'),
    ).toEqual({
      error: {
        code: 'invalid_argument',
        message: 'one or more fields are invalid',
        details: { field_violations: [{ field: 'name', description: 'has the form of an id' }] },
        request_id: 'r',
      },
    });
  });

  test('every code has a 4xx or 5xx status', () => {
    for (const status of Object.values(ERROR_STATUS)) expect(status >= 400 && status < 600).toBe(true);
  });
});
