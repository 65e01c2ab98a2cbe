import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { bootstrap } from '../../src/compose/bootstrap.js';
import { runAccountCommand } from '../../src/compose/commands/account.js';
import { openServerDatabase as openDatabase } from '../../src/compose/database.js';
import { checkLocalPassword } from '../../src/identity/signin/accounts.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const EMAIL = 'Ada@Example.com';
const FIRST = 'correct horse battery staple';
const SECOND = 'a whole new password';

/** Runs the command in process with `input` on stdin; stdout and stderr collected. */
async function account(
  argv: string[],
  env: Record<string, string>,
  input = '',
  stdin: { isTTY?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runAccountCommand(argv, {
    stdin: Object.assign(Readable.from([Buffer.from(input)]), stdin),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
  });
  return { code, stdout, stderr };
}

/** The principal id the sign-in's own check finds for this email and password, if any. */
async function signIn(dataDir: string, email: string, password: string): Promise<string | undefined> {
  const db = await openDatabase({ databaseUrl: undefined, dataDir });
  try {
    return await checkLocalPassword(db, email, password);
  } finally {
    await db.close();
  }
}

async function emptyDataDir(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'svc-account-')), 'data');
}

describe('svc-server account set (PGlite in a temp dir)', () => {
  let env: Record<string, string>;

  beforeAll(async () => {
    const dir = await emptyDataDir();
    env = { SVC_DATA_DIR: dir };
    const db = await openDatabase({ databaseUrl: undefined, dataDir: dir });
    await bootstrap(db, { baseUrl: 'http://127.0.0.1:1/v1', keyFilePath: join(dir, '..', 'key.json') });
    await db.close();
  });

  test('creates an account that signs in; a reset lets only the new password in', async () => {
    const created = await account(['set', EMAIL, '--name', 'ada', '--password-stdin'], env, `${FIRST}\n`);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/^Created the local account ada@example\.com \(user \w+\)/);
    expect(created.stdout).not.toContain(FIRST);
    const principalId = await signIn(env.SVC_DATA_DIR as string, 'ada@example.com', FIRST);
    expect(principalId).toEqual(expect.any(String));

    const reset = await account(['set', 'ada@example.com', '--password-stdin'], env, SECOND);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain(`Reset the password of ada@example.com (user ${principalId})`);
    expect(reset.stdout).not.toContain(SECOND);
    expect(await signIn(env.SVC_DATA_DIR as string, EMAIL, FIRST)).toBeUndefined();
    expect(await signIn(env.SVC_DATA_DIR as string, EMAIL, SECOND)).toBe(principalId);
    // Two runs of the command and three sign-ins each open PGlite and hash with scrypt at full cost:
    // 8 s alone, past the default 20 s on a loaded machine.
  }, 60_000);

  test.each<[string, { argv: string[]; tty?: boolean; want: RegExp }]>([
    ['no subcommand', { argv: [], want: /missing command/ }],
    ['an unknown subcommand', { argv: ['delete', EMAIL, '--password-stdin'], want: /unknown command/ }],
    ['no email', { argv: ['set', '--password-stdin'], want: /missing <email>/ }],
    [
      'the password as an argument',
      { argv: ['set', EMAIL, 'hunter22hunter22'], want: /unexpected argument/ },
    ],
    ['no --password-stdin', { argv: ['set', EMAIL], want: /--password-stdin/ }],
    [
      'an unknown option',
      { argv: ['set', EMAIL, '--password', 'x', '--password-stdin'], want: /Unknown option/ },
    ],
    ['a terminal on stdin', { argv: ['set', EMAIL, '--password-stdin'], tty: true, want: /terminal/ }],
  ])('usage error (exit 2): %s', async (_name, { argv, tty, want }) => {
    const result = await account(argv, env, FIRST, { isTTY: tty === true });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(want);
    expect(result.stderr).toContain('Usage: svc-server account set');
  });

  test.each([
    ['a short password', { email: EMAIL, password: 'short', want: /at least 8 characters/ }],
    ['not an email', { email: 'ada', password: FIRST, want: /not an email address/ }],
  ])('refused (exit 1): %s', async (_name, { email, password, want }) => {
    const result = await account(['set', email, '--password-stdin'], env, password);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(want);
  });

  test('refused on an empty database: bootstrap must come first', async () => {
    const dataDir = await emptyDataDir();
    const result = await account(['set', EMAIL, '--password-stdin'], { SVC_DATA_DIR: dataDir }, FIRST);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the database is empty: start svc-server once first/);
    expect(await signIn(dataDir, EMAIL, FIRST)).toBeUndefined();
  });

  test.runIf(existsSync(MAIN))(
    'the built bin reads the password from a pipe and never prints it',
    async () => {
      const child = spawn(process.execPath, [MAIN, 'account', 'set', 'bob@example.com', '--password-stdin'], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stdin.end(`${FIRST}\n`);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, output).toBe(0);
      expect(output).toMatch(/^Created the local account bob@example\.com/);
      expect(output).not.toContain(FIRST);
      expect(await signIn(env.SVC_DATA_DIR as string, 'bob@example.com', FIRST)).toEqual(expect.any(String));
    },
    60_000,
  );
});
