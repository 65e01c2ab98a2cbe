import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { ApiError, unwrap } from '../src/index.js';
import { createClient } from '../src/node.js';
import { BASE, errorBody, fakeFetch, json, makeKeyFile, recordingSleep, tokenBody } from './helpers.js';

const me = { identity: { principal: { id: 'p' } } };

/** A server that mints tok-1, tok-2, … and accepts only the tokens listed in `valid` (all by default). */
function authServer(valid?: (token: string) => boolean) {
  let minted = 0;
  return fakeFetch((_request, seen) => {
    if (seen.path === '/auth/token') return json(200, tokenBody(`tok-${++minted}`));
    const token = seen.headers.get('Authorization')?.replace(/^Bearer /, '') ?? '';
    return valid && !valid(token) ? json(401, errorBody('unauthenticated')) : json(200, me);
  });
}

describe('key file auth', () => {
  it('signs an assertion the server can verify, with the claims of design §7', async () => {
    const { keyFile, publicKey } = await makeKeyFile('ES256');
    const server = authServer();
    const client = createClient({ keyFile, fetch: server.fetch });
    await unwrap(client.GET('/me'));

    const exchange = server.on('/auth/token')[0]!;
    expect(exchange.method).toBe('POST');
    expect(JSON.parse(exchange.body)).toEqual({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' });
    const assertion = exchange.headers.get('Authorization')!.replace(/^Bearer /, '');
    const { payload } = await jwtVerify(assertion, publicKey, { audience: `${BASE}/auth/token` });
    expect(decodeProtectedHeader(assertion)).toMatchObject({ alg: 'ES256', kid: keyFile.key_id });
    expect(payload).toMatchObject({ iss: keyFile.principal_id, sub: keyFile.principal_id });
    expect(payload.exp! - payload.iat!).toBe(300);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.on('/me')[0]!.headers.get('Authorization')).toBe('Bearer tok-1');
  });

  it.each([
    ['reuses the token well before expiry', 0, 1, 'tok-1'],
    ['reuses it up to 60 s before expiry', 839_000, 1, 'tok-1'],
    ['renews it inside the 60 s margin', 841_000, 2, 'tok-2'],
    ['renews it after expiry', 901_000, 2, 'tok-2'],
  ])('%s', async (_name, advanceMs, wantExchanges, wantToken) => {
    const { keyFile } = await makeKeyFile();
    const server = authServer();
    let now = 1_700_000_000_000;
    const client = createClient({ keyFile, fetch: server.fetch, now: () => now });
    await unwrap(client.GET('/me'));
    now += advanceMs;
    await unwrap(client.GET('/me'));
    expect(server.on('/auth/token')).toHaveLength(wantExchanges);
    expect(server.on('/me')[1]!.headers.get('Authorization')).toBe(`Bearer ${wantToken}`);
  });

  it('coalesces concurrent renewals into one exchange', async () => {
    const { keyFile } = await makeKeyFile();
    const server = authServer();
    const client = createClient({ keyFile, fetch: server.fetch });
    await Promise.all(Array.from({ length: 5 }, () => unwrap(client.GET('/me'))));
    expect(server.on('/auth/token')).toHaveLength(1);
    expect(server.on('/me')).toHaveLength(5);
  });

  it('retries once with a fresh token after a 401', async () => {
    const { keyFile } = await makeKeyFile();
    const server = authServer((token) => token !== 'tok-1'); // the first token got revoked
    const client = createClient({ keyFile, fetch: server.fetch });
    await expect(unwrap(client.GET('/me'))).resolves.toEqual(me);
    expect(server.on('/me').map((s) => s.headers.get('Authorization'))).toEqual([
      'Bearer tok-1',
      'Bearer tok-2',
    ]);
    expect(server.on('/auth/token')).toHaveLength(2);
  });

  it('does not retry a second 401: the error reaches the caller', async () => {
    const { keyFile } = await makeKeyFile();
    const server = authServer(() => false);
    const client = createClient({ keyFile, fetch: server.fetch });
    const err = await unwrap(client.POST('/workspaces', { body: { name: 'dev' } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(server.on('/workspaces')).toHaveLength(2);
    expect(server.on('/auth/token')).toHaveLength(2);
    // The second attempt is the same call: same Idempotency-Key.
    const keys = server.on('/workspaces').map((s) => s.headers.get('Idempotency-Key'));
    expect(keys[0]).toBeTruthy();
    expect(keys[1]).toBe(keys[0]);
  });

  it('reports a failed exchange as ApiError from /auth/token, without calling the API', async () => {
    const { keyFile } = await makeKeyFile();
    const server = fakeFetch((_r, seen) =>
      seen.path === '/auth/token'
        ? json(401, errorBody('unauthenticated', 'key revoked', null, 'req_tok'))
        : json(200, me),
    );
    const client = createClient({ keyFile, fetch: server.fetch });
    await expect(client.GET('/me')).rejects.toMatchObject({
      name: 'ApiError',
      code: 'unauthenticated',
      requestId: 'req_tok',
    });
    expect(server.on('/me')).toHaveLength(0);
  });

  it('retries the exchange on 503 with a new assertion (new jti) each time', async () => {
    const { keyFile } = await makeKeyFile();
    const server = fakeFetch((_r, seen, i) => {
      if (seen.path !== '/auth/token') return json(200, me);
      return i === 0
        ? json(503, errorBody('unavailable'), { 'Retry-After': '1' })
        : json(200, tokenBody('tok'));
    });
    const { sleep, delays } = recordingSleep();
    const client = createClient({ keyFile, fetch: server.fetch, sleep });
    await unwrap(client.GET('/me'));
    const [first, second] = server.on('/auth/token').map((s) => s.headers.get('Authorization'));
    expect(first).not.toBe(second);
    expect(delays).toEqual([1000]);
  });
});

describe('other credentials', () => {
  it('sends a static token and never retries its 401', async () => {
    const server = fakeFetch(() => json(401, errorBody('unauthenticated')));
    const client = createClient({ baseUrl: BASE, token: 'abc', fetch: server.fetch });
    const { response } = await client.GET('/me');
    expect(response.status).toBe(401);
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.headers.get('Authorization')).toBe('Bearer abc');
  });

  it('asks getToken for a forced refresh once after a 401', async () => {
    const calls: boolean[] = [];
    const server = fakeFetch((_r, seen) =>
      seen.headers.get('Authorization') === 'Bearer fresh'
        ? json(200, me)
        : json(401, errorBody('unauthenticated')),
    );
    const client = createClient({
      baseUrl: BASE,
      fetch: server.fetch,
      getToken: async ({ forceRefresh }) => {
        calls.push(forceRefresh);
        return forceRefresh ? 'fresh' : 'stale';
      },
    });
    await expect(unwrap(client.GET('/me'))).resolves.toEqual(me);
    expect(calls).toEqual([false, true]);
  });

  it('sends no Authorization header without credentials', async () => {
    const server = fakeFetch(() => json(200, { status: 'ok' }));
    const client = createClient({ baseUrl: BASE, fetch: server.fetch });
    await client.GET('/health');
    expect(server.seen[0]!.headers.has('Authorization')).toBe(false);
  });

  it('refuses two credentials at once', () => {
    expect(() => createClient({ baseUrl: BASE, token: 'a', getToken: async () => 'b' })).toThrow(TypeError);
  });
});

describe('the browser entry', () => {
  it('refuses a keyFile (it lives in @svc/client/node) instead of making an anonymous client', async () => {
    const { createClient: browserCreateClient } = await import('../src/index.js');
    const { keyFile } = await makeKeyFile();
    expect(() => browserCreateClient({ baseUrl: BASE, keyFile } as never)).toThrow(/@svc\/client\/node/);
  });
});
