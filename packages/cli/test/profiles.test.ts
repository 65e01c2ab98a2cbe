import { generateKeyPairSync, verify } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { sessionPath, writeSession } from '../src/session.js';
import { envelope, fakeApi, svc } from './support/io.js';

const me = {
  identity: {
    principal: { kind: 'user', id: 'p1', name: 'ada', display_name: 'Ada', email: 'ada@example.com' },
    workspaces: [],
  },
};
const list = { workspaces: [], next_cursor: null, has_more: false };
const future = () => new Date(Date.now() + 600_000).toISOString();

async function signedIn(dir: string, profile: string, baseUrl: string, token: string) {
  await writeSession(
    dir,
    {
      base_url: baseUrl,
      refresh_token: 'r',
      access_token: token,
      expires_at: future(),
      updated_at: future(),
    },
    profile,
  );
}

describe('profiles: named base addresses and credentials', () => {
  test('set-profile and use store config.json 0600 in a 0700 directory; later runs use that profile', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'svc-profiles-')), 'svc');
    const env = { SVC_CONFIG_DIR: dir };
    const set = await svc(['config', 'set-profile', 'work', '--base-url', 'https://work.test/v1/'], { env });
    expect(set.code).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
    await signedIn(dir, 'work', 'https://work.test/v1', 'work-token');
    await signedIn(dir, 'default', 'https://home.test/v1', 'home-token');
    expect(statSync(sessionPath(dir, 'work')).mode & 0o777).toBe(0o600);

    const api = fakeApi({ 'GET /workspaces': () => ({ status: 200, body: list }) });
    expect((await svc(['workspaces', 'list'], { env, fetch: api.fetch })).code).toBe(0);
    expect((await svc(['config', 'use', 'work'], { env })).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).current).toBe('work');
    expect((await svc(['workspaces', 'list'], { env, fetch: api.fetch })).code).toBe(0);
    expect((await svc(['--profile', 'default', 'workspaces', 'list'], { env, fetch: api.fetch })).code).toBe(
      0,
    );
    expect(
      (await svc(['workspaces', 'list'], { env: { ...env, SVC_PROFILE: 'default' }, fetch: api.fetch })).code,
    ).toBe(0);
    expect(api.seen.map((s) => `${s.url.host} ${s.headers.get('authorization')}`)).toEqual([
      'home.test Bearer home-token',
      'work.test Bearer work-token',
      'home.test Bearer home-token',
      'home.test Bearer home-token',
    ]);

    const listed = await svc(['config', 'list'], { env });
    expect(listed.stdout).toMatch(/^\*\s+work\s+https:\/\/work\.test\/v1\s+session$/m);

    // Signing out of one profile leaves the other signed in.
    expect((await svc(['auth', 'logout'], { env })).code).toBe(0);
    expect(existsSync(sessionPath(dir, 'work'))).toBe(false);
    expect(existsSync(sessionPath(dir, 'default'))).toBe(true);
  });

  test.each<[string, string[], string]>([
    ['an unknown profile', ['config', 'use', 'nope'], 'unknown_profile'],
    ['a name that is not a file name', ['--profile', '../x', 'workspaces', 'list'], 'invalid_profile'],
  ])('usage error (exit 2) for %s', async (_name, argv, code) => {
    const env = { SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-profiles-')) };
    const outcome = await svc(argv, { env });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`code: ${code}`);
  });
});

describe('svc auth status', () => {
  const base = { SVC_BASE_URL: 'https://svc.test/v1' };

  test('names the profile and credentials and who the server says they are', async () => {
    const api = fakeApi({ 'GET /me': () => ({ status: 200, body: me }) });
    const env = { ...base, SVC_ACCESS_TOKEN: 't', SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-')) };
    const outcome = await svc(['auth', 'status', '-o', 'json'], { env, fetch: api.fetch });
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toEqual({
      profile: 'default',
      credentials: 'SVC_ACCESS_TOKEN',
      base_url: 'https://svc.test/v1',
      signed_in_as: { kind: 'user', id: 'p1', name: 'Ada', email: 'ada@example.com' },
      workspaces: 0,
    });
  });

  test.each<[string, Record<string, string>, string]>([
    ['no credentials', {}, 'not_signed_in'],
    ['credentials the server refuses', { SVC_ACCESS_TOKEN: 'revoked' }, 'unauthenticated'],
  ])('%s → exit 3', async (_name, extra, code) => {
    const api = fakeApi({
      'GET /me': () => ({ status: 401, body: envelope('unauthenticated', 'token revoked', 'r1') }),
    });
    const env = { ...base, ...extra, SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-')) };
    const outcome = await svc(['auth', 'status'], { env, fetch: api.fetch });
    expect(outcome.code).toBe(3);
    expect(outcome.stderr).toContain(`code: ${code}`);
  });
});

describe('svc auth status: when each credential expires', () => {
  const base = { SVC_BASE_URL: 'https://svc.test/v1' };
  const jwt = (claims: Record<string, unknown>) =>
    `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
  const at = (seconds: number) => new Date(seconds * 1000).toISOString();
  const robot = {
    identity: {
      principal: { kind: 'service_account', id: 'sa1', name: 'robot', display_name: 'Robot' },
      workspaces: [{ id: 'w1', name: 'dev', display_name: 'Dev', role: 'admin' }],
    },
  };
  const { privateKey } = generateKeyPairSync('ed25519');
  const keyPath = join(mkdtempSync(join(tmpdir(), 'svc-key-')), 'key.json');
  writeFileSync(
    keyPath,
    JSON.stringify({
      type: 'service_account_key',
      key_id: 'k1',
      principal_id: 'sa1',
      algorithm: 'EdDSA',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      base_url: 'https://svc.test/v1',
    }),
    { mode: 0o600 },
  );
  const minted = jwt({ iat: 1_900_000_000, exp: 1_900_000_900 });
  const token = () => ({
    status: 200,
    body: { token: { access_token: minted, token_type: 'Bearer', expires_in: 900 } },
  });

  test('SVC_ACCESS_TOKEN: its expiry and lifetime, read from the token', async () => {
    const api = fakeApi({ 'GET /me': () => ({ status: 200, body: me }) });
    const env = {
      ...base,
      SVC_ACCESS_TOKEN: jwt({ iat: 1_900_000_000, exp: 1_900_000_300 }),
      SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-')),
    };
    const outcome = await svc(['auth', 'status', '-o', 'json'], { env, fetch: api.fetch });
    expect(JSON.parse(outcome.stdout).access_token).toEqual({
      expires_at: at(1_900_000_300),
      lifetime_seconds: 300,
    });
  });

  test.each<[string, { keys: () => { status: number; body: unknown }; json: unknown; table: RegExp }]>([
    [
      'a key that expires',
      {
        keys: () => ({
          status: 200,
          body: {
            keys: [{ id: 'k1', state: 'active', expires_at: '2027-01-01T00:00:00Z' }],
            has_more: false,
          },
        }),
        json: { id: 'k1', expires_at: '2027-01-01T00:00:00Z', state: 'active' },
        table: /^key\.expires_at +2027-01-01T00:00:00Z$/m,
      },
    ],
    [
      'a key that never expires',
      {
        keys: () => ({ status: 200, body: { keys: [{ id: 'k1', state: 'active' }], has_more: false } }),
        json: { id: 'k1', expires_at: null, state: 'active' },
        table: /^key\.expires_at +never$/m,
      },
    ],
    [
      'keys the account may not list',
      {
        keys: () => ({ status: 403, body: envelope('permission_denied', 'no', 'r') }),
        json: { id: 'k1', expires_at: expect.stringMatching(/^unknown: /) },
        table: /^key\.expires_at +unknown: /m,
      },
    ],
  ])('a key file: the token it mints, and %s', async (_name, { keys, json, table }) => {
    const api = fakeApi({
      'POST /auth/token': token,
      'GET /me': () => ({ status: 200, body: robot }),
      'GET /workspaces/w1/service-accounts/sa1/keys': keys,
    });
    const env = { SVC_KEY_FILE: keyPath, SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-')) };
    const status = JSON.parse(
      (await svc(['auth', 'status', '-o', 'json'], { env, fetch: api.fetch })).stdout,
    );
    expect(status.access_token).toEqual({
      expires_at: at(1_900_000_900),
      lifetime_seconds: 900,
      renewed: 'from the key file, before it expires',
    });
    expect(status.key).toEqual(json);
    const text = (await svc(['auth', 'status'], { env, fetch: api.fetch })).stdout;
    expect(text).toMatch(/^access_token\.lifetime_seconds +900$/m);
    expect(text).toMatch(table);
  });

  test('a session: the access token’s expiry, and the refresh token’s said unknown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-'));
    await signedIn(dir, 'default', 'https://svc.test/v1', jwt({ iat: 1_900_000_000, exp: 1_900_000_900 }));
    const api = fakeApi({ 'GET /me': () => ({ status: 200, body: me }) });
    const outcome = await svc(['auth', 'status', '-o', 'json'], {
      env: { SVC_CONFIG_DIR: dir },
      fetch: api.fetch,
    });
    const status = JSON.parse(outcome.stdout);
    expect(status.access_token).toMatchObject({
      lifetime_seconds: 900,
      renewed: expect.stringContaining('refresh'),
    });
    expect(Date.parse(status.access_token.expires_at)).toBeGreaterThan(Date.now());
    expect(status.refresh_token.expires_at).toMatch(/^not told by the server/);
  });
});

describe('svc auth assertion', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keyFile = {
    type: 'service_account_key',
    key_id: 'k1',
    principal_id: 'sa1',
    algorithm: 'EdDSA',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    base_url: 'https://svc.test/v1',
  };
  const path = join(mkdtempSync(join(tmpdir(), 'svc-key-')), 'key.json');
  writeFileSync(path, JSON.stringify(keyFile), { mode: 0o600 });

  test('prints one signed assertion for <base>/auth/token and sends nothing', async () => {
    const api = fakeApi({});
    const outcome = await svc(['auth', 'assertion'], { env: { SVC_KEY_FILE: path }, fetch: api.fetch });
    expect(outcome.code).toBe(0);
    expect(api.seen).toHaveLength(0);
    const [header, payload, signature] = outcome.stdout.trim().split('.') as [string, string, string];
    const ok = verify(
      null,
      Buffer.from(`${header}.${payload}`),
      publicKey,
      Buffer.from(signature, 'base64url'),
    );
    expect(ok).toBe(true);
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toMatchObject({
      alg: 'EdDSA',
      kid: 'k1',
    });
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({
      iss: 'sa1',
      sub: 'sa1',
      aud: 'https://svc.test/v1/auth/token',
    });
  });

  test('without a key file: exit 3, no_key_file', async () => {
    const outcome = await svc(['auth', 'assertion'], {
      env: { SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-')) },
    });
    expect(outcome.code).toBe(3);
    expect(outcome.stderr).toContain('code: no_key_file');
  });
});
