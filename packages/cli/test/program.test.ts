import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { EXIT_CODES } from '../src/exit-codes.js';
import { envelope, fakeApi, svc } from './support/io.js';

const BASE = 'https://svc.test/v1';
const env = { SVC_BASE_URL: BASE, SVC_ACCESS_TOKEN: 'header.payload.signature' };
const computer = {
  id: '01jc4s0m8k3v7w2x9y5z6a1b2c3',
  name: 'box',
  state: 'running',
  size: 'small',
  image: 'ubuntu-2404',
  labels: { team: 'a' },
};
const operation = (state: string, progress: number) => ({
  id: '01jc4s0m8k3v7w2x9y5z6aop000',
  type: 'computer.start',
  state,
  progress,
  target: { type: 'computer', id: computer.id },
});

describe('exit codes by class, and errors on stderr with code, message and request id', () => {
  test.each<[string, { status: number; code: string; exit: number }]>([
    ['401 → authentication', { status: 401, code: 'unauthenticated', exit: 3 }],
    ['404 → not found', { status: 404, code: 'not_found', exit: 4 }],
    ['409 → conflict', { status: 409, code: 'invalid_state', exit: 5 }],
    ['400 → other', { status: 400, code: 'invalid_argument', exit: 1 }],
    ['403 → other', { status: 403, code: 'permission_denied', exit: 1 }],
    ['500 → other', { status: 500, code: 'internal', exit: 1 }],
  ])('%s', async (_name, { status, code, exit }) => {
    const api = fakeApi({
      'GET /workspaces/dev/computers/box': () => ({
        status,
        body: envelope(code, `it failed with ${code}`, 'req-123'),
      }),
    });
    const outcome = await svc(['computers', 'get', 'dev', 'box'], { env, fetch: api.fetch });
    expect(outcome.code).toBe(exit);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toContain(`error: it failed with ${code}`);
    expect(outcome.stderr).toContain(`code: ${code} (HTTP ${status})`);
    expect(outcome.stderr).toContain('request id: req-123');
  });

  test('a create that found no room says why, and which resource was short', async () => {
    const api = fakeApi({
      'POST /workspaces/dev/computers': () => ({
        status: 503,
        body: envelope(
          'unavailable',
          'no host has room for a computer of size large now; retry later',
          'req-9',
          {
            reason: 'no_capacity',
            resource: 'vcpus',
          },
        ),
      }),
    });
    const outcome = await svc(
      ['computers', 'create', 'dev', '--name', 'big', '--size', 'large', '--image', 'busybox'],
      { env, fetch: api.fetch },
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('code: unavailable (HTTP 503)');
    expect(outcome.stderr).toContain('reason: no_capacity (short of vcpus)');
  });

  test.each<[string, { argv: string[]; exit: number }]>([
    ['unknown command', { argv: ['computers', 'explode'], exit: 2 }],
    ['missing positional', { argv: ['computers', 'get', 'dev'], exit: 2 }],
    ['missing required body field', { argv: ['members', 'create', 'dev', '--principal-id', 'x'], exit: 2 }],
    [
      'value outside the enum',
      { argv: ['members', 'create', 'dev', '--principal-id', 'x', '--role', 'god'], exit: 2 },
    ],
    ['not an integer', { argv: ['workspaces', 'list', '--limit', 'ten'], exit: 2 }],
    ['help', { argv: ['--help'], exit: 0 }],
  ])('usage: %s', async (_name, { argv, exit }) => {
    const api = fakeApi({});
    const outcome = await svc(argv, { env, fetch: api.fetch });
    expect(outcome.code).toBe(exit);
    expect(api.seen).toHaveLength(0);
  });

  test('not signed in → 3, no request sent', async () => {
    const api = fakeApi({});
    const outcome = await svc(['workspaces', 'list'], {
      env: { SVC_BASE_URL: BASE, SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-')) },
      fetch: api.fetch,
    });
    expect(outcome.code).toBe(3);
    expect(outcome.stderr).toContain('not_signed_in');
    expect(api.seen).toHaveLength(0);
  });

  test('svc --help lists every command group (built lazily) and svc <group> --help its commands', async () => {
    const { listOperations, loadDocument } = await import('@svc/contract');
    const { operationCommands } = await import('../src/spec/commands.js');
    const top = (await svc(['--help'])).stdout;
    for (const { group } of operationCommands(loadDocument()))
      expect(top).toMatch(new RegExp(`^  ${group}\\b`, 'm'));
    const computers = (await svc(['computers', '--help'])).stdout;
    for (const op of listOperations(loadDocument()).filter((o) => o.tag === 'computers'))
      expect(computers).toContain(op.summary);
  });

  test('svc --help lists every exit code', async () => {
    const { stdout } = await svc(['--help']);
    for (const { code, meaning } of EXIT_CODES) expect(stdout).toContain(`${code}  ${meaning}`);
  });
});

describe('requests built from the command line', () => {
  test('positionals fill the path, options the query, body and headers', async () => {
    const api = fakeApi({
      'POST /workspaces/dev/computers': () => ({
        status: 202,
        body: { computer, operations: [operation('pending', 0)] },
      }),
    });
    const outcome = await svc(
      [
        'computers',
        'create',
        'dev',
        '--name',
        'box',
        '--size',
        'small',
        '--image',
        'ubuntu-2404',
        '--labels',
        'team=a,env=dev',
        '--idempotency-key',
        'k-1',
      ],
      { env, fetch: api.fetch },
    );
    expect(outcome.code).toBe(0);
    const [request] = api.seen;
    expect(request?.method).toBe('POST');
    expect(request?.url.href).toBe(`${BASE}/workspaces/dev/computers`);
    expect(request?.headers.get('authorization')).toBe('Bearer header.payload.signature');
    expect(request?.headers.get('idempotency-key')).toBe('k-1');
    expect(request?.body).toEqual({
      name: 'box',
      size: 'small',
      image: 'ubuntu-2404',
      labels: { team: 'a', env: 'dev' },
    });
  });

  test('query options: integers, enums and booleans', async () => {
    const api = fakeApi({
      'GET /workspaces/dev/computers': () => ({
        status: 200,
        body: { computers: [], next_cursor: null, has_more: false },
      }),
    });
    await svc(['computers', 'list', 'dev', '--limit', '5', '--state', 'running', '--include-deleted'], {
      env,
      fetch: api.fetch,
    });
    expect(Object.fromEntries(api.seen[0]!.url.searchParams)).toEqual({
      limit: '5',
      state: 'running',
      include_deleted: 'true',
    });
  });

  test('health is called without a token', async () => {
    const api = fakeApi({ 'GET /health': () => ({ status: 200, body: { status: 'ok' } }) });
    const outcome = await svc(['health', 'get', '--json'], { env: { SVC_BASE_URL: BASE }, fetch: api.fetch });
    expect(outcome.code).toBe(0);
    expect(api.seen[0]!.headers.get('authorization')).toBeNull();
  });
});

describe('output', () => {
  const list = { computers: [computer], next_cursor: 'c2', has_more: true };

  test('a state the spec does not list yet (x-extensible-enum) prints as it came, exit 0', async () => {
    const odd = { ...list, computers: [{ ...list.computers[0], state: 'hibernating' }] };
    const api = fakeApi({ 'GET /workspaces/dev/computers': () => ({ status: 200, body: odd }) });
    const outcome = await svc(['computers', 'list', 'dev'], { env, fetch: api.fetch });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('hibernating');
  });

  test('--json prints the API JSON as is', async () => {
    const api = fakeApi({ 'GET /workspaces/dev/computers': () => ({ status: 200, body: list }) });
    const outcome = await svc(['--json', 'computers', 'list', 'dev'], { env, fetch: api.fetch });
    expect(JSON.parse(outcome.stdout)).toEqual(list);
  });

  test('default: a table of chosen columns, and the next page on stderr', async () => {
    const api = fakeApi({ 'GET /workspaces/dev/computers': () => ({ status: 200, body: list }) });
    const outcome = await svc(['computers', 'list', 'dev'], { env, fetch: api.fetch });
    expect(outcome.stdout.split('\n')[0]).toMatch(/^NAME\s+STATE\s+SIZE\s+IMAGE\s+LABELS\s+ID$/);
    expect(outcome.stdout).toContain('team=a');
    expect(outcome.stderr).toContain('--cursor c2');
  });

  test('a table fits 80 columns: wide fields are left out, the name and state stay', async () => {
    const wide = {
      ...computer,
      workspace_id: '01jc4s0m8k3v7w2x9y5z6aws000',
      labels: { team: 'platform-infrastructure', env: 'production', owner: 'someone' },
      current_operation_id: '01jc4s0m8k3v7w2x9y5z6aop000',
      created_at: '2026-11-23T10:00:00.000Z',
      updated_at: '2026-11-23T10:00:00.000Z',
    };
    const api = fakeApi({
      'GET /workspaces/dev/computers': () => ({
        status: 200,
        body: {
          computers: [wide, { ...wide, name: 'a-much-longer-computer-name' }],
          next_cursor: null,
          has_more: false,
        },
      }),
    });
    const outcome = await svc(['computers', 'list', 'dev'], { env, fetch: api.fetch });
    const lines = outcome.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^NAME\s+.*STATE/);
    expect(lines[0]).not.toContain('WORKSPACE_ID');
  });

  test.each<[string, string[], string]>([
    ['--columns picks and orders them', ['--columns', 'state,name'], 'STATE    NAME\nrunning  box\n'],
    ['--columns reaches into objects', ['--columns', 'name,labels.team'], 'NAME  LABELS.TEAM\nbox   a\n'],
    ['--query prints values one per line', ['--query', 'computers[].name'], 'box\n'],
    ['--query then -o json', ['--query', 'computers[0].size', '-o', 'json'], '"small"\n'],
  ])('%s', async (_name, flags, want) => {
    const api = fakeApi({ 'GET /workspaces/dev/computers': () => ({ status: 200, body: list }) });
    const outcome = await svc(['computers', 'list', 'dev', ...flags], { env, fetch: api.fetch });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe(want);
  });

  test('a page of operations is a table too', async () => {
    const api = fakeApi({
      'GET /workspaces/dev/operations': () => ({
        status: 200,
        body: { operations: [operation('succeeded', 100)], next_cursor: null, has_more: false },
      }),
    });
    const outcome = await svc(['ops', 'list', 'dev'], { env, fetch: api.fetch });
    expect(outcome.stdout.split('\n')[0]).toMatch(/^ID\s+TYPE\s+STATE\s+PROGRESS/);
    expect(outcome.stdout).not.toContain('has_more');
  });

  test('--columns on one resource prints those fields', async () => {
    const api = fakeApi({ 'GET /workspaces/dev/computers/box': () => ({ status: 200, body: { computer } }) });
    const outcome = await svc(['computers', 'get', 'dev', 'box', '--columns', 'state,labels.team'], {
      env,
      fetch: api.fetch,
    });
    expect(outcome.stdout).toBe('state        running\nlabels.team  a\n');
  });

  test('-o yaml prints the answer as YAML', async () => {
    const api = fakeApi({ 'GET /workspaces/dev/computers': () => ({ status: 200, body: list }) });
    const outcome = await svc(['-o', 'yaml', 'computers', 'list', 'dev'], { env, fetch: api.fetch });
    const { parse } = await import('yaml');
    expect(parse(outcome.stdout)).toEqual(list);
  });

  test.each<[string, string[], string]>([
    ['an unknown format', ['-o', 'xml'], 'invalid_output'],
    ['a malformed query', ['--query', 'computers[?'], 'invalid_query'],
  ])('usage error (exit 2) for %s', async (_name, flags, code) => {
    const api = fakeApi({ 'GET /workspaces/dev/computers': () => ({ status: 200, body: list }) });
    const outcome = await svc(['computers', 'list', 'dev', ...flags], { env, fetch: api.fetch });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`code: ${code}`);
    expect(outcome.stdout).toBe('');
  });
});

describe("nouns, and today's names as aliases", () => {
  test.each<[string[], string]>([
    [['sizes', 'list'], 'GET /sizes'],
    [['catalog', 'list-sizes'], 'GET /sizes'],
    [['images', 'list'], 'GET /images'],
    [['catalog', 'list-images'], 'GET /images'],
    [['ops', 'get', 'op1'], 'GET /operations/op1'],
    [['operations', 'get', 'op1'], 'GET /operations/op1'],
    [['computers', 'restart', 'dev', 'box'], 'POST /workspaces/dev/computers/box/restart'],
  ])('svc %j → %s', async (argv, route) => {
    const api = fakeApi({});
    await svc(argv, { env, fetch: api.fetch });
    expect(`${api.seen[0]?.method} ${api.seen[0]?.url.pathname.replace(/^\/v1/, '')}`).toBe(route);
  });
});

describe('--wait on long-running commands', () => {
  const polls = (states: [string, number][]) => {
    let i = 0;
    return () => {
      const [state, progress] = states[Math.min(i++, states.length - 1)]!;
      return { status: 200, body: { operation: operation(state, progress) } };
    };
  };

  test('waits silently on a pipe, then prints the computer as it is now (read again)', async () => {
    const api = fakeApi({
      'POST /workspaces/dev/computers/box/start': () => ({
        status: 202,
        body: { computer: { ...computer, state: 'starting' }, operations: [operation('pending', 0)] },
      }),
      [`GET /operations/${operation('', 0).id}`]: polls([
        ['running', 50],
        ['succeeded', 100],
      ]),
      'GET /workspaces/dev/computers/box': () => ({ status: 200, body: { computer } }),
    });
    const outcome = await svc(['computers', 'start', 'dev', 'box', '--wait', '-o', 'json'], {
      env,
      fetch: api.fetch,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe('');
    const printed = JSON.parse(outcome.stdout);
    expect(printed.computer.state).toBe('running');
    expect(printed.operations[0].state).toBe('succeeded');
  });

  test('create --wait reads the new computer by its id', async () => {
    const api = fakeApi({
      'POST /workspaces/dev/computers': () => ({
        status: 202,
        body: { computer: { ...computer, state: 'creating' }, operations: [operation('pending', 0)] },
      }),
      [`GET /operations/${operation('', 0).id}`]: polls([['succeeded', 100]]),
      [`GET /workspaces/dev/computers/${computer.id}`]: () => ({ status: 200, body: { computer } }),
    });
    const outcome = await svc(
      ['computers', 'create', 'dev', '--name', 'box', '--size', 'small', '--image', 'ubuntu-2404', '--wait'],
      { env, fetch: api.fetch },
    );
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^state\s+running$/m);
  });

  test('a TTY gets a spinner with the operation, erased at the end', async () => {
    const api = fakeApi({
      'POST /workspaces/dev/computers/box/start': () => ({
        status: 202,
        body: { operations: [operation('pending', 0)] },
      }),
      [`GET /operations/${operation('', 0).id}`]: polls([['succeeded', 100]]),
      'GET /workspaces/dev/computers/box': () => ({ status: 200, body: { computer } }),
    });
    const outcome = await svc(['computers', 'start', 'dev', 'box', '--wait', '--query', 'computer.state'], {
      env,
      fetch: api.fetch,
      isTTY: true,
    });
    // The 202 carried only the operation: the computer is read by the action's own path.
    expect(outcome.stdout).toBe('running\n');
    expect(outcome.stderr).toContain('⠋ computer.start');
    expect(outcome.stderr).toContain('succeeded  100%');
    expect(outcome.stderr.endsWith('\x1b[0J')).toBe(true);
  });

  test('a failed operation exits 1 with its error, and prints no resource', async () => {
    const failed = {
      ...operation('failed', 100),
      error: { code: 'internal', message: 'the driver failed', details: {}, request_id: 'r' },
    };
    const api = fakeApi({
      'POST /workspaces/dev/computers/box/start': () => ({
        status: 202,
        body: { computer, operations: [operation('pending', 0)] },
      }),
      [`GET /operations/${operation('', 0).id}`]: () => ({ status: 200, body: { operation: failed } }),
    });
    const outcome = await svc(['computers', 'start', 'dev', 'box', '--wait'], { env, fetch: api.fetch });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toContain('the driver failed');
    expect(outcome.stderr).toContain('code: internal');
  });

  test('svc ops wait <id> waits for an operation started earlier', async () => {
    const api = fakeApi({
      [`GET /operations/${operation('', 0).id}`]: polls([['succeeded', 100]]),
    });
    const outcome = await svc(['ops', 'wait', operation('', 0).id, '--json'], { env, fetch: api.fetch });
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout).operations[0].state).toBe('succeeded');
  });

  test('a delete done when answered (204) takes --wait too: one request, nothing to wait for', async () => {
    const api = fakeApi({ 'DELETE /workspaces/dev/snapshots/old': () => ({ status: 204 }) });
    const outcome = await svc(['snapshots', 'delete', 'dev', 'old', '--wait'], { env, fetch: api.fetch });
    expect(outcome).toMatchObject({ code: 0, stderr: '' });
    expect(api.seen.map((s) => `${s.method} ${s.url.pathname}`)).toEqual([
      'DELETE /v1/workspaces/dev/snapshots/old',
    ]);
  });
});

describe("waiting for a computer's state", () => {
  const box = (state: string) => ({
    id: '01m6cnenctgek8472bc9m7jfnzd',
    workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
    name: 'box',
    state,
    size: 'small',
    image: 'ubuntu-2404',
    labels: {},
    created_at: '2026-11-03T10:00:00Z',
    updated_at: '2026-11-03T10:00:00Z',
  });

  test('svc computers wait <ws> <computer> --for running: one long-poll request, then the computer', async () => {
    const api = fakeApi({
      'GET /workspaces/dev/computers/box': () => ({
        status: 200,
        body: { computer: box('running') },
        headers: { 'wait-result': 'reached' },
      }),
    });
    const outcome = await svc(['computers', 'wait', 'dev', 'box', '--for', 'running,failed', '--json'], {
      env,
      fetch: api.fetch,
    });
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout).computer.state).toBe('running');
    expect(api.seen).toHaveLength(1);
    expect(api.seen[0]!.url.searchParams.get('wait_for')).toBe('running,failed');
    expect(api.seen[0]!.url.searchParams.get('wait')).toBe('60');
  });

  test('svc computers get --wait-for … --query-wait N passes both to the long poll (derived from the spec)', async () => {
    const api = fakeApi({
      'GET /workspaces/dev/computers/box': () => ({ status: 200, body: { computer: box('stopped') } }),
    });
    const outcome = await svc(
      ['computers', 'get', 'dev', 'box', '--wait-for', 'stopped', '--query-wait', '30', '--json'],
      { env, fetch: api.fetch },
    );
    expect(outcome.code).toBe(0);
    expect(api.seen[0]!.url.searchParams.get('wait_for')).toBe('stopped');
    expect(api.seen[0]!.url.searchParams.get('wait')).toBe('30');
  });
});

describe('svc keys create', () => {
  const keyFile = {
    type: 'service_account_key',
    key_id: 'k1',
    principal_id: 'p1',
    algorithm: 'EdDSA',
    private_key: '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n',
    base_url: BASE,
  };
  const api = () =>
    fakeApi({
      'POST /workspaces/dev/service-accounts/robot/keys': () => ({
        status: 201,
        body: { key: { id: 'k1', algorithm: 'EdDSA', state: 'active', key_file: keyFile } },
      }),
    });

  test('writes the key file with mode 0600 and keeps the private key off stdout', async () => {
    const output = join(mkdtempSync(join(tmpdir(), 'svc-key-')), 'key.json');
    const outcome = await svc(['--json', 'keys', 'create', 'dev', 'robot', '--key-file', output], {
      env,
      fetch: api().fetch,
    });
    expect(outcome.code).toBe(0);
    expect(statSync(output).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(output, 'utf8'))).toEqual(keyFile);
    expect(outcome.stdout).not.toContain('PRIVATE KEY');
    expect(JSON.parse(outcome.stdout)).toEqual({ key: { id: 'k1', algorithm: 'EdDSA', state: 'active' } });
    expect(outcome.stderr).toContain(`SVC_KEY_FILE=${output}`);
  });

  test('--output <path> (before formats) still names the key file', async () => {
    const output = join(mkdtempSync(join(tmpdir(), 'svc-key-')), 'key.json');
    const outcome = await svc(['keys', 'create', 'dev', 'robot', '--output', output], {
      env,
      fetch: api().fetch,
    });
    expect(outcome.code).toBe(0);
    expect(JSON.parse(readFileSync(output, 'utf8'))).toEqual(keyFile);
  });

  test('never overwrites an existing file', async () => {
    const output = join(mkdtempSync(join(tmpdir(), 'svc-key-')), 'key.json');
    await svc(['keys', 'create', 'dev', 'robot', '--output', output], { env, fetch: api().fetch });
    const second = await svc(['keys', 'create', 'dev', 'robot', '--output', output], {
      env,
      fetch: api().fetch,
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('exists already');
  });
});

test('--version prints this package’s version from its package.json', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const { code, stdout } = await svc(['--version']);
  expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: version });
});
