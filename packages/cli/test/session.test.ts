import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { configDir, signinUrl } from '../src/paths.js';
import { deleteSession, readSession, sessionPath, withSessionLock, writeSession } from '../src/session.js';

describe('configDir', () => {
  test.each<[string, { env: Record<string, string>; want: string }]>([
    ['SVC_CONFIG_DIR wins', { env: { SVC_CONFIG_DIR: '/c', XDG_CONFIG_HOME: '/x' }, want: '/c' }],
    ['XDG_CONFIG_HOME next', { env: { XDG_CONFIG_HOME: '/x' }, want: '/x/svc' }],
    ['~/.config/svc last', { env: {}, want: '/home/ada/.config/svc' }],
  ])('%s', (_name, { env, want }) => {
    expect(configDir(env, '/home/ada')).toBe(want);
  });
});

test.each<[string, string]>([
  ['https://api.example/v1', 'https://api.example/signin/authorize'],
  ['https://api.example/v1/', 'https://api.example/signin/authorize'],
  ['http://127.0.0.1:8080/prefix/v1', 'http://127.0.0.1:8080/prefix/signin/authorize'],
])('signinUrl(%s)', (base, want) => {
  expect(signinUrl(base).href).toBe(want);
});

describe('session storage', () => {
  test('written with mode 0600 in a 0700 directory, read back, deleted', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'svc-session-')), 'nested', 'svc');
    const session = {
      base_url: 'https://api.example/v1',
      refresh_token: 'r'.repeat(43),
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    await writeSession(dir, session);
    expect(statSync(sessionPath(dir)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(await readSession(dir)).toEqual(session);
    // Rewriting keeps the mode, even over a file someone widened.
    await writeSession(dir, { ...session, refresh_token: 's'.repeat(43) });
    expect(statSync(sessionPath(dir)).mode & 0o777).toBe(0o600);
    expect(await deleteSession(dir)).toBe(true);
    expect(await readSession(dir)).toBeUndefined();
    expect(await deleteSession(dir)).toBe(false);
  });

  test('a damaged session is an authentication error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-session-'));
    writeFileSync(sessionPath(dir), '{"base_url": 1}');
    await expect(readSession(dir)).rejects.toMatchObject({ exit: 'authentication', code: 'invalid_session' });
  });

  test('the lock serialises refreshes across callers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-session-'));
    const order: string[] = [];
    const slow = (name: string) =>
      withSessionLock(dir, async () => {
        order.push(`${name} in`);
        await new Promise((resolve) => setTimeout(resolve, 30));
        order.push(`${name} out`);
      });
    await Promise.all([slow('a'), slow('b')]);
    // Either may win the race for the lock file; what matters is that they never overlap.
    expect([
      ['a in', 'a out', 'b in', 'b out'],
      ['b in', 'b out', 'a in', 'a out'],
    ]).toContainEqual(order);
  });
});
