import { beforeAll, expect, test } from 'vitest';
import { setLocalAccount } from '../../src/identity/signin/accounts.js';
import { createSigninHandler } from '../../src/identity/signin/handler.js';
import { s256 } from '../../src/identity/signin/pkce.js';
import { hashSecret } from '../../src/identity/signin/secrets.js';
import type { Database } from '../../src/platform/db/database.js';
import { cheapenPassword } from '../support/credentials.js';
import { describeEngines } from '../support/databases.js';

const ORIGIN = 'https://svc.test';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const REDIRECT = 'http://127.0.0.1:53682/callback';
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery';
const authorizeQuery = {
  response_type: 'code',
  client_id: 'svc-cli',
  redirect_uri: REDIRECT,
  code_challenge: s256(VERIFIER),
  code_challenge_method: 'S256',
  state: 'state-123',
};

type Handler = ReturnType<typeof createSigninHandler>;

/** GET the form, then POST it back as a browser would (cookie + hidden fields), with overrides. */
async function signIn(
  handler: Handler,
  fields: Record<string, string>,
  options: { cookie?: string | null; headers?: Record<string, string>; address?: string } = {},
): Promise<Response> {
  const form = await handler(
    new Request(`${ORIGIN}/signin/authorize?${new URLSearchParams(authorizeQuery)}`),
  );
  expect(form.status).toBe(200);
  const html = await form.text();
  const hidden = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
  const cookie =
    options.cookie === undefined ? (form.headers.get('set-cookie') ?? '').split(';')[0] : options.cookie;
  const body = new URLSearchParams({ ...hidden, ...fields });
  return handler(
    new Request(`${ORIGIN}/signin/authorize`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: ORIGIN,
        'x-test-address': options.address ?? '10.0.0.1',
        ...(cookie ? { cookie } : {}),
        ...options.headers,
      },
    }),
  );
}

describeEngines('browser sign-in pages', (engine) => {
  let db: Database;
  let handler: Handler;

  beforeAll(async () => {
    db = await engine.open();
    await setLocalAccount(db, { email: EMAIL, password: PASSWORD });
    await cheapenPassword(db, EMAIL, PASSWORD);
    handler = createSigninHandler({
      db,
      publicOrigin: ORIGIN,
      clientAddress: (request) => request.headers.get('x-test-address') ?? undefined,
      attempts: { maxFailures: 3, windowSeconds: 60 },
    });
  });

  test('the form is served with a CSRF cookie and token, never cached or framed', async () => {
    const response = await handler(
      new Request(`${ORIGIN}/signin/authorize?${new URLSearchParams(authorizeQuery)}`),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('set-cookie')).toMatch(
      /^svc_signin_csrf=[A-Za-z0-9_-]{43}; Path=\/signin; HttpOnly; SameSite=Strict; Max-Age=3600; Secure$/,
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    // Not no-referrer: browsers then send `Origin: null` on the post, which is refused.
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await response.text()).toMatch(/name="csrf_token" value="[A-Za-z0-9_-]{43}"/);
  });

  test.each<[string, { query: Record<string, string>; status: number; location: RegExp | null }]>([
    [
      'redirect_uri not loopback: 400, no redirect',
      {
        query: { ...authorizeQuery, redirect_uri: 'https://evil.example/callback' },
        status: 400,
        location: null,
      },
    ],
    [
      'redirect_uri localhost: 400, no redirect',
      {
        query: { ...authorizeQuery, redirect_uri: 'http://localhost:53682/callback' },
        status: 400,
        location: null,
      },
    ],
    [
      'unknown client: 400, no redirect',
      { query: { ...authorizeQuery, client_id: 'evil' }, status: 400, location: null },
    ],
    [
      'plain PKCE: error sent back',
      {
        query: { ...authorizeQuery, code_challenge_method: 'plain' },
        status: 303,
        location: /^http:\/\/127\.0\.0\.1:53682\/callback\?error=invalid_request&.*state=state-123$/,
      },
    ],
  ])('%s', async (_name, { query, status, location }) => {
    const response = await handler(new Request(`${ORIGIN}/signin/authorize?${new URLSearchParams(query)}`));
    expect(response.status).toBe(status);
    if (location) expect(response.headers.get('location')).toMatch(location);
    else expect(response.headers.get('location')).toBeNull();
  });

  test.each<
    [string, { cookie?: string | null; fields?: Record<string, string>; headers?: Record<string, string> }]
  >([
    ['no CSRF cookie', { cookie: null }],
    ['another cookie', { cookie: 'svc_signin_csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
    ['no CSRF field', { fields: { csrf_token: '' } }],
    ['forged CSRF field', { fields: { csrf_token: 'x'.repeat(43) } }],
    ['cross-site Origin', { headers: { origin: 'https://evil.example' } }],
    ['opaque Origin', { headers: { origin: 'null' } }],
  ])('CSRF: %s → 403, no code', async (_name, { cookie, fields, headers }) => {
    const response = await signIn(
      handler,
      { email: EMAIL, password: PASSWORD, ...fields },
      { ...(cookie === undefined ? {} : { cookie }), ...(headers ? { headers } : {}), address: '10.0.1.1' },
    );
    expect(response.status).toBe(403);
    expect(response.headers.get('location')).toBeNull();
  });

  test('a tampered redirect_uri in the form is refused without redirecting', async () => {
    const response = await signIn(
      handler,
      { email: EMAIL, password: PASSWORD, redirect_uri: 'https://evil.example/callback' },
      { address: '10.0.2.1' },
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  test('wrong password: 401 page, the form again, no code', async () => {
    const response = await signIn(
      handler,
      { email: EMAIL, password: 'wrong password' },
      { address: '10.0.3.1' },
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('Wrong email or password.');
  });

  test('right password: 303 to the loopback with a code (stored hashed) and the state', async () => {
    const response = await signIn(
      handler,
      { email: 'ADA@example.com', password: PASSWORD },
      { address: '10.0.4.1' },
    );
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('state-123');
    const code = location.searchParams.get('code') ?? '';
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { rows } = await db.query<{ code_hash: string; ttl: number }>(
      'SELECT code_hash, EXTRACT(EPOCH FROM expires_at - created_at)::int AS ttl FROM authorization_codes WHERE code_hash = $1 OR code_hash = $2',
      [code, hashSecret(code)],
    );
    expect(rows).toEqual([{ code_hash: hashSecret(code), ttl: 60 }]);
  });

  test('rate limit per account and address: after 3 failures even the right password gets 429', async () => {
    for (let i = 0; i < 3; i++)
      expect(
        (await signIn(handler, { email: EMAIL, password: `wrong ${i}` }, { address: '10.0.5.1' })).status,
      ).toBe(401);
    const limited = await signIn(handler, { email: EMAIL, password: PASSWORD }, { address: '10.0.5.1' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('location')).toBeNull();
    // Another address is not locked out by the first one's failures.
    expect(
      (await signIn(handler, { email: EMAIL, password: PASSWORD }, { address: '10.0.5.2' })).status,
    ).toBe(303);
  });

  test.each<[string, { method: string; path: string; status: number }]>([
    ['unknown page', { method: 'GET', path: '/signin/other', status: 404 }],
    ['PUT on authorize', { method: 'PUT', path: '/signin/authorize', status: 405 }],
    ['landing page', { method: 'GET', path: '/signin', status: 200 }],
  ])('%s', async (_name, { method, path, status }) => {
    expect((await handler(new Request(`${ORIGIN}${path}`, { method }))).status).toBe(status);
  });
});
