// A new user's first mistakes, made with what ships: the CLI packed and installed with `npm install
// -g` (test/support/installed.ts), its `svc` run against the built `svc-server --sandbox`. Each
// message must say what to type next, in the words of the command line (flags, `svc` commands), not
// of the HTTP API (patterns, JSON Schema types, `GET /…`).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv } from '@svc/tools/child-process';
import { type ServerProcess, serverBuilt, spawnServer } from '@svc/tools/server-process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type InstalledCli,
  installPacked,
  type Outcome,
  PACKAGE,
  runInstalled,
} from '../support/installed.js';

const missing = !existsSync(join(PACKAGE, 'dist', 'main.js')) || !serverBuilt();
if (missing && process.env.CI)
  throw new Error('the installed svc cannot be tested under CI: build the CLI and the server first');

const CREATE = ['computers', 'create', 'default', '--size', 'small', '--image', 'ubuntu-2404'];
const NAME_WORDS =
  "lowercase letters, digits and '-', 1 to 63 characters, starting and ending with a letter or digit";

/** A mistake and what svc must answer: its exit code, what stderr must hold and must not. */
type Mistake = [
  string,
  { given: string[]; want: { code: number; says: (string | RegExp)[]; never?: (string | RegExp)[] } },
];

const mistakes: Mistake[] = [
  [
    'a name off the pattern: the pattern in words',
    {
      given: [...CREATE, '--name', 'Box-3'],
      want: { code: 1, says: ['--name', NAME_WORDS, '"Box-3"'], never: ['must match pattern', '^[a-z0-9]'] },
    },
  ],
  [
    'a JSON flag that is not JSON: the flag, where it failed and the example, no whole help',
    {
      given: [...CREATE, '--name', 'box-3', '--lifetime', '{idle_timeout_seconds:1800}'],
      want: {
        code: 2,
        says: [
          '--lifetime',
          'not valid JSON',
          /\{idle_timeout_seconds:1800\}\n\s+\^/,
          /--lifetime '\{"idle_timeout_seconds":1800/,
        ],
        never: ['Usage:', '--idempotency-key <idempotency-key>'],
      },
    },
  ],
  [
    'an unknown field of a JSON flag: the known ones and the nearest',
    {
      given: [...CREATE, '--name', 'box-3', '--lifetime', '{"idle_timeout":1800}'],
      want: {
        code: 2,
        says: ['--lifetime', 'idle_timeout', 'did you mean "idle_timeout_seconds"?', 'expires_at', 'on_end'],
        never: ['Usage:'],
      },
    },
  ],
  [
    'a field of the wrong type: the type in words',
    {
      given: [...CREATE, '--name', 'box-3', '--lifetime', '{"idle_timeout_seconds":"30m"}'],
      want: {
        code: 2,
        says: ['--lifetime', 'idle_timeout_seconds', 'must be a whole number of seconds', 'or null', '"30m"'],
        never: ['integer,null', 'Usage:'],
      },
    },
  ],
  [
    'an unknown size: the svc command that lists them, not the API route',
    {
      given: [...CREATE.slice(0, 3), '--name', 'box-3', '--size', 'huge', '--image', 'ubuntu-2404'],
      want: { code: 1, says: ['--size', 'svc sizes list'], never: ['GET /sizes'] },
    },
  ],
  [
    'an unknown image: the svc command that lists them',
    {
      given: [...CREATE.slice(0, 3), '--name', 'box-3', '--size', 'small', '--image', 'ubunty'],
      want: { code: 1, says: ['--image', 'svc images list'], never: ['GET /images'] },
    },
  ],
  [
    'a misspelt workspace: the near name, and how to list them',
    {
      given: ['computers', 'list', 'defualt'],
      want: {
        code: 4,
        says: ['workspace defualt not found', 'did you mean "default"?', 'svc workspaces list'],
      },
    },
  ],
  [
    'a misspelt computer: the near name, and how to list them',
    {
      given: ['computers', 'get', 'default', 'bxo'],
      want: { code: 4, says: ['did you mean "box"?', 'svc computers list default'] },
    },
  ],
  [
    'a misspelt computer to copy to: the near name, not a missing directory',
    {
      given: ['computers', 'cp', join(PACKAGE, 'package.json'), 'default/bxo:/home/svc/'],
      want: {
        code: 4,
        says: ['computer bxo not found', 'did you mean "box"?', 'default/box:/home/svc/'],
        never: ['no such directory'],
      },
    },
  ],
  [
    'a command in a stopped computer: how to start it',
    {
      given: ['computers', 'exec', 'default', 'idle', '--', 'ls'],
      want: { code: 5, says: ['is stopped', 'svc computers start default idle'] },
    },
  ],
  [
    'a name taken: delete the old one or choose another',
    {
      given: [...CREATE, '--name', 'box'],
      want: { code: 5, says: ['already exists', 'svc computers delete default box', 'another --name'] },
    },
  ],
  [
    'a program the computer does not have: said so, with the shell’s exit code',
    {
      given: ['computers', 'exec', 'default', 'box', '--', 'make'],
      want: {
        code: 127,
        says: ['svc: make: command not found in the computer'],
        never: ['simulated driver'],
      },
    },
  ],
];

describe.skipIf(missing)('a new user’s mistakes, through the installed svc and svc-server --sandbox', () => {
  let cli: InstalledCli;
  let server: ServerProcess;
  let dir: string;
  let env: Record<string, string>;

  function svc(argv: string[]): Promise<Outcome> {
    return runInstalled(cli.bin, env, argv);
  }
  async function ok(argv: string[]): Promise<string> {
    const outcome = await svc(argv);
    expect(outcome.code, `svc ${argv.join(' ')}\n${outcome.stderr}`).toBe(0);
    return outcome.stdout;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mistakes-'));
    [cli, server] = await Promise.all([installPacked(), spawnServer({ env: { SVC_SIM_STEP_MS: '20' } })]);
    env = childEnv({ HOME: dir, SVC_KEY_FILE: server.keyFilePath, SVC_CONFIG_DIR: join(dir, 'config') });
    await Promise.all([
      ok([...CREATE, '--name', 'box', '--wait']),
      ok([...CREATE, '--name', 'idle', '--wait']),
    ]);
    await ok(['computers', 'stop', 'default', 'idle', '--wait']);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([cli?.remove(), server?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test.each(mistakes)('%s', async (_name, { given, want }) => {
    const outcome = await svc(given);
    const shown = `svc ${given.join(' ')}\n${outcome.stderr}`;
    expect(outcome.code, shown).toBe(want.code);
    for (const text of want.says)
      if (typeof text === 'string') expect(outcome.stderr, shown).toContain(text);
      else expect(outcome.stderr, shown).toMatch(text);
    for (const text of want.never ?? [])
      if (typeof text === 'string') expect(outcome.stderr, shown).not.toContain(text);
      else expect(outcome.stderr, shown).not.toMatch(text);
  });

  test('--help documents every JSON flag: its fields and an example from the spec', async () => {
    const help = await ok(['computers', 'create', '--help']);
    expect(help).toMatch(/--lifetime <json>/);
    for (const field of ['idle_timeout_seconds', 'expires_at', 'on_end']) expect(help).toContain(field);
    expect(help).toMatch(/--lifetime '\{"idle_timeout_seconds":1800/);
    expect(help).not.toContain('GET /sizes');
    expect(help).toContain('svc sizes list');
  });

  test('svc computers cp says what it moved: bytes, time and rate', async () => {
    const local = join(dir, 'notes.txt');
    writeFileSync(local, 'x'.repeat(3000));
    const outcome = await svc(['computers', 'cp', local, 'default/box:/home/svc/']);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stderr).toMatch(
      /^svc: copied notes\.txt: 2\.9 KiB in \d+(\.\d+)? s \([\d.]+ [KMG]?i?B\/s\)\n$/,
    );
  });

  test('svc snapshots delete takes --wait, as computers delete does', async () => {
    await ok(['snapshots', 'create', 'default', '--name', 'gone', '--computer', 'box', '--wait']);
    const outcome = await svc(['snapshots', 'delete', 'default', 'gone', '--wait']);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect((await svc(['snapshots', 'get', 'default', 'gone'])).code).toBe(4);
  });

  test('svc auth status shows when each credential expires (a key file: the token it mints, the key)', async () => {
    const status = JSON.parse(await ok(['auth', 'status', '-o', 'json']));
    expect(Date.parse(status.access_token.expires_at)).toBeGreaterThan(Date.now());
    expect(status.access_token.lifetime_seconds).toBe(900);
    expect(status.key).toMatchObject({ expires_at: null });
    const table = await ok(['auth', 'status']);
    expect(table).toMatch(/access_token\.expires_at\s+\d{4}-\d\d-\d\dT/);
    expect(table).toMatch(/key\.expires_at\s+never/);
  });
});
