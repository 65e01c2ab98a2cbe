import { createHash } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { opener } from '../src/browser.js';
import { startLoopback } from '../src/loopback.js';
import { createPkce, newState } from '../src/pkce.js';
import { readSession, sessionPath } from '../src/session.js';
import { envelope, fakeApi, type Seen, svc } from './support/io.js';

const BASE = 'http://svc.test/v1';
const jwt = (n: number) => `header.payload${n}.signature`;

describe('PKCE and state', () => {
  test('verifier is 43 unreserved characters, challenge its S256', () => {
    const { verifier, challenge } = createPkce();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(challenge).toBe(createHash('sha256').update(verifier).digest('base64url'));
    expect(createPkce().verifier).not.toBe(verifier);
    expect(newState()).not.toBe(newState());
  });
});

describe('loopback listener', () => {
  test('binds 127.0.0.1 on a free port with the fixed path', async () => {
    const loopback = await startLoopback({ state: 's', timeoutMs: 5000 });
    expect(loopback.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*\/callback$/);
    loopback.code.catch(() => {});
    await loopback.close();
  });

  test.each<[string, { query: string; path?: string; status: number }]>([
    ['other path → 404, still waiting', { path: '/favicon.ico', query: '', status: 404 }],
    ['wrong state → 400, still waiting', { query: 'code=evil&state=other', status: 400 }],
    ['no state → 400, still waiting', { query: 'code=evil', status: 400 }],
  ])('%s', async (_name, { query, path, status }) => {
    const loopback = await startLoopback({ state: 'right', timeoutMs: 5000 });
    const url = new URL(loopback.redirectUri);
    const response = await fetch(`${url.origin}${path ?? url.pathname}?${query}`);
    expect(response.status).toBe(status);
    // The real redirect still gets through afterwards.
    expect((await fetch(`${loopback.redirectUri}?code=good&state=right`)).status).toBe(200);
    expect(await loopback.code).toBe('good');
    // And only once.
    expect((await fetch(`${loopback.redirectUri}?code=again&state=right`)).status).toBe(400);
    await loopback.close();
  });

  test('an error sent back with our state ends the wait', async () => {
    const loopback = await startLoopback({ state: 'right', timeoutMs: 5000 });
    const failed = loopback.code.catch((error: unknown) => error);
    await fetch(`${loopback.redirectUri}?error=access_denied&error_description=no&state=right`);
    expect(await failed).toMatchObject({ code: 'access_denied', exit: 'authentication' });
    await loopback.close();
  });

  test('times out', async () => {
    const loopback = await startLoopback({ state: 'right', timeoutMs: 50 });
    await expect(loopback.code).rejects.toMatchObject({ code: 'signin_timeout' });
    await loopback.close();
  });
});

test.each<[string, { platform: NodeJS.Platform; env: Record<string, string>; want: [string, string[]] }]>([
  ['linux', { platform: 'linux', env: {}, want: ['xdg-open', ['u&x']] }],
  ['macOS', { platform: 'darwin', env: {}, want: ['open', ['u&x']] }],
  [
    'windows without cmd',
    { platform: 'win32', env: {}, want: ['rundll32', ['url.dll,FileProtocolHandler', 'u&x']] },
  ],
  ['$BROWSER', { platform: 'linux', env: { BROWSER: 'firefox' }, want: ['firefox', ['u&x']] }],
])('browser opener: %s', (_name, { platform, env, want }) => {
  expect(opener('u&x', platform, env)).toEqual(want);
});

/** A fake authorization server: the "browser" follows the sign-in URL straight back to the loopback with a code. */
function fakeAuthServer() {
  let refreshCount = 0;
  const issuedRefresh = new Set<string>();
  const rotated = new Set<string>();
  let challenge = '';
  let redirect = '';
  const api = fakeApi({
    'POST /auth/token': (seen: Seen) => {
      const body = seen.body as Record<string, string>;
      const credential = seen.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
      if (body.grant_type === 'authorization_code') {
        const ok =
          credential === 'the-code' &&
          body.redirect_uri === redirect &&
          createHash('sha256')
            .update(body.code_verifier ?? '')
            .digest('base64url') === challenge;
        if (!ok) return { status: 401, body: envelope('unauthenticated', 'bad code', 'req-code') };
      } else if (body.grant_type === 'refresh_token') {
        if (!issuedRefresh.has(credential) || rotated.has(credential))
          return { status: 401, body: envelope('unauthenticated', 'refresh token reused', 'req-reuse') };
        rotated.add(credential);
      } else return { status: 400, body: envelope('invalid_request', 'grant', 'r') };
      const refresh = `refresh-${++refreshCount}`.padEnd(43, 'x');
      issuedRefresh.add(refresh);
      return {
        status: 200,
        body: {
          token: {
            access_token: jwt(refreshCount),
            token_type: 'Bearer',
            expires_in: 900,
            expires_at: new Date(Date.now() + 900_000).toISOString(),
            refresh_token: refresh,
          },
        },
      };
    },
    'GET /me': (seen) => ({
      status: 200,
      body: {
        identity: {
          principal: {
            id: 'p1',
            kind: 'user',
            name: 'ada',
            display_name: 'Ada',
            email: 'ada@example.com',
            auth: seen.headers.get('authorization'),
          },
          workspaces: [{ id: 'w1', name: 'dev', display_name: 'Dev', role: 'owner' }],
        },
      },
    }),
  });
  const openBrowser = async (url: string) => {
    const signin = new URL(url);
    expect(`${signin.origin}${signin.pathname}`).toBe('http://svc.test/signin/authorize');
    const params = signin.searchParams;
    expect(params.get('client_id')).toBe('svc-cli');
    expect(params.get('response_type')).toBe('code');
    expect(params.get('code_challenge_method')).toBe('S256');
    challenge = params.get('code_challenge') ?? '';
    redirect = params.get('redirect_uri') ?? '';
    const response = await fetch(
      `${redirect}?code=the-code&state=${encodeURIComponent(params.get('state') ?? '')}`,
    );
    expect(response.status).toBe(200);
  };
  return { ...api, openBrowser };
}

describe('svc login, token, whoami, logout (against a fake authorization server)', () => {
  test('the whole session cycle', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'svc-login-')), 'config');
    const server = fakeAuthServer();
    const io = { env: { SVC_CONFIG_DIR: dir }, fetch: server.fetch, openBrowser: server.openBrowser };

    const login = await svc(['--base-url', BASE, 'login'], io);
    expect(login.stderr).toContain('http://svc.test/signin/authorize?');
    expect(login).toMatchObject({ code: 0, stdout: `${jwt(1)}\n` });
    const exchange = server.seen.find((s) => s.url.pathname === '/v1/auth/token')!;
    expect(exchange.headers.get('authorization')).toBe('Bearer the-code');
    expect(statSync(sessionPath(dir)).mode & 0o777).toBe(0o600);
    expect(await readSession(dir)).toMatchObject({
      base_url: BASE,
      refresh_token: 'refresh-1'.padEnd(43, 'x'),
    });

    // whoami uses the cached access token: no refresh.
    const whoami = await svc(['whoami'], io);
    expect(whoami.code).toBe(0);
    expect(whoami.stdout).toContain('Ada <ada@example.com> (user p1)');
    expect(whoami.stdout).toMatch(/dev\s+Dev\s+owner/);
    expect(server.seen.filter((s) => s.url.pathname === '/v1/auth/token')).toHaveLength(1);

    // svc token refreshes and stores the rotated refresh token.
    const token = await svc(['token'], io);
    expect(token).toMatchObject({ code: 0, stdout: `${jwt(2)}\n` });
    expect((await readSession(dir))?.refresh_token).toBe('refresh-2'.padEnd(43, 'x'));
    expect((await svc(['token'], io)).stdout).toBe(`${jwt(3)}\n`);

    const logout = await svc(['logout'], io);
    expect(logout.code).toBe(0);
    expect(await readSession(dir)).toBeUndefined();
    const after = await svc(['token'], io);
    expect(after.code).toBe(3);
  });

  test('--quiet prints nothing; a refused refresh exits 3 with the request id', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'svc-login-')), 'config');
    const server = fakeAuthServer();
    const io = {
      env: { SVC_CONFIG_DIR: dir, SVC_BASE_URL: BASE },
      fetch: server.fetch,
      openBrowser: server.openBrowser,
    };
    expect(await svc(['login', '--quiet'], io)).toMatchObject({ code: 0, stdout: '' });
    const session = await readSession(dir);
    await svc(['token'], io);
    // Put the old (rotated) refresh token back, as a stolen copy would be used.
    const { writeSession } = await import('../src/session.js');
    await writeSession(dir, { ...session!, access_token: undefined });
    const reused = await svc(['token'], io);
    expect(reused.code).toBe(3);
    expect(reused.stderr).toContain('request id: req-reuse');
  });

  test('login without any base address is a usage error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-login-'));
    const outcome = await svc(['login', '--no-browser'], { env: { SVC_CONFIG_DIR: dir } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('--base-url');
  });
});
