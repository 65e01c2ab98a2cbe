import { listOperations, loadDocument } from '@svc/contract';
import { describe, expect, test } from 'vitest';
import { INPUT_PATH } from '../../src/commands/screen.js';
import { buildProgram } from '../../src/program.js';
import { operationCommands, verbOf } from '../../src/spec/commands.js';

const document = loadDocument();
const operations = listOperations(document);
const commands = operationCommands(document);
const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, isTTY: false };

describe('a command for every operation of the spec', () => {
  test('the spec has operations (so the coverage below means something)', () => {
    expect(operations.length).toBeGreaterThanOrEqual(30);
  });

  test.each(operations.map((op) => [op.operationId, op] as const))(
    '%s has exactly one command, registered in the program',
    (operationId, op) => {
      const matching = commands.filter((c) => c.operation.operationId === operationId);
      expect(matching).toHaveLength(1);
      const spec = matching[0]!;
      const program = buildProgram(io);
      const group = program.commands.find((c) => c.name() === spec.group);
      const command = group?.commands.find((c) => c.name() === spec.name);
      expect(command, `svc ${spec.group} ${spec.name}`).toBeDefined();
      // `svc computers input` is hand-written (commands/screen.ts): actions as words after the path's
      // positionals, or the operation's own --actions JSON (then optional).
      if (op.path === INPUT_PATH && op.method === 'post') {
        expect(command!.registeredArguments.map((a) => a.name())).toEqual([
          'workspace',
          'computer',
          'actions',
        ]);
        expect(command!.options.map((o) => o.long).sort()).toEqual(['--actions', '--idempotency-key']);
        return;
      }
      // Path parameters are the positionals, in path order; then a required list-of-strings body field (argv).
      const pathParams = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!.replace(/_/g, '-'));
      const rest = spec.rest ? [spec.rest.name.replace(/_/g, '-')] : [];
      expect(command!.registeredArguments.map((a) => a.name())).toEqual([...pathParams, ...rest]);
      // Query parameters and body fields are options; required body fields are mandatory; enums are choices.
      const flags = new Map(command!.options.map((o) => [o.long, o]));
      for (const option of spec.options) {
        const registered = flags.get(`--${option.flag}`);
        expect(registered, `--${option.flag}`).toBeDefined();
        expect(registered!.mandatory).toBe(option.required);
        expect(registered!.argChoices).toEqual(option.choices);
      }
      // Long-running operations wait with --wait; a delete done when answered takes it too (nothing to wait for).
      expect(flags.has('--wait')).toBe('202' in (op.operation.responses as object) || op.method === 'delete');
      // A command-running operation (answers an Execution) reads its stdin from svc's: `--stdin` is a flag.
      expect(flags.has('--stdin')).toBe(spec.runsCommand);
      if (spec.runsCommand) expect(flags.get('--stdin')!.required).toBe(false);
    },
  );

  test.each<[string, string]>([
    ['listComputers', 'computers list'],
    ['getComputer', 'computers get'],
    ['createComputer', 'computers create'],
    ['updateComputer', 'computers update'],
    ['deleteComputer', 'computers delete'],
    ['startComputer', 'computers start'],
    ['stopComputer', 'computers stop'],
    ['restartComputer', 'computers restart'],
    ['execComputer', 'computers exec'],
    ['listSizes', 'sizes list'],
    ['listImages', 'images list'],
    ['listWorkspaces', 'workspaces list'],
    ['createMember', 'members create'],
    ['deleteKey', 'keys delete'],
    ['getOperation', 'operations get'],
  ])('%s is `svc %s`, by the noun rule', (operationId, place) => {
    const command = commands.find((c) => c.operation.operationId === operationId)!;
    expect(`${command.group} ${command.name}`).toBe(place);
  });

  test('every old name (tag + verb) still reaches its operation, hidden from help', () => {
    const program = buildProgram(io);
    for (const spec of commands.filter((c) => c.legacy)) {
      const group = program.commands.find((c) => c.name() === spec.legacy!.group);
      expect(
        group?.commands.find((c) => c.name() === spec.legacy!.name),
        `svc ${spec.legacy!.group} ${spec.legacy!.name}`,
      ).toBeDefined();
    }
  });

  test('`operations` is also `ops`', () => {
    const program = buildProgram(io);
    expect(program.commands.find((c) => c.name() === 'operations')?.aliases()).toContain('ops');
  });

  test("argv of execComputer and runComputer is the trailing argument (and a webhook endpoint's event types), and only they run a command", () => {
    for (const [id, query] of [
      ['execComputer', ['wait']],
      ['runComputer', []],
    ] as const) {
      const exec = commands.find((c) => c.operation.operationId === id);
      expect(exec?.rest?.name).toBe('argv');
      expect(exec?.options.map((o) => o.name)).toEqual([
        'Idempotency-Key',
        ...query,
        'timeout_seconds',
        'max_output_bytes',
      ]);
    }
    // exec's wait for a computer still starting is `--query-wait` (svc keeps `--wait` for 202 commands).
    const exec = commands.find((c) => c.operation.operationId === 'execComputer');
    expect(exec?.options.find((o) => o.name === 'wait')?.flag).toBe('query-wait');
    expect(commands.filter((c) => c.runsCommand).map((c) => c.operation.operationId)).toEqual([
      'execComputer',
      'runComputer',
    ]);
    // A required list of words is the trailing argument of any command: a command's argv, and the
    // event types of a webhook endpoint (`svc webhooks create-endpoint ws --url … -- '*'`).
    expect(commands.filter((c) => c.rest).map((c) => [c.operation.operationId, c.rest?.name])).toEqual([
      ['execComputer', 'argv'],
      ['runComputer', 'argv'],
      ['createWebhookEndpoint', 'event_types'],
    ]);
    // The long form's output comes from its operation after --wait, not from a resource read again.
    expect(commands.find((c) => c.operation.operationId === 'runComputer')?.refetch).toBeUndefined();
  });

  test('how a command presents its operation is what the spec declares (x-svc.cli), not guessed', () => {
    expect(commands.filter((c) => c.writesKeyFile).map((c) => c.operation.operationId)).toEqual([
      'createKey',
    ]);
    // The same document with the declarations moved: the commands follow them, whatever the schemas say.
    const moved = structuredClone(document);
    const policy = (path: string, method: string) =>
      (moved.paths[path] as Record<string, { 'x-svc': Record<string, unknown> }>)[method]?.['x-svc'] ?? {};
    delete policy('/workspaces/{workspace}/computers/{computer}/exec', 'post').cli;
    delete policy('/workspaces/{workspace}/service-accounts/{service_account}/keys', 'post').cli;
    policy('/workspaces/{workspace}/computers/{computer}/start', 'post').cli = 'key-file';
    const again = operationCommands(moved);
    expect(again.filter((c) => c.runsCommand).map((c) => c.operation.operationId)).toEqual(['runComputer']);
    expect(again.filter((c) => c.writesKeyFile).map((c) => c.operation.operationId)).toEqual([
      'startComputer',
    ]);
  });

  test('command names are unique within each group', () => {
    const names = commands.map((c) => `${c.group} ${c.name}`);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('derivation from the schemas', () => {
  const find = (id: string) => commands.find((c) => c.operation.operationId === id)!;

  test.each<[string, { operationId: string; flag: string; want: Record<string, unknown> }]>([
    [
      'body enum (role) is a mandatory choice',
      {
        operationId: 'createMember',
        flag: 'role',
        want: { in: 'body', kind: 'string', required: true, choices: ['owner', 'admin', 'editor', 'viewer'] },
      },
    ],
    [
      'query integer',
      {
        operationId: 'listComputers',
        flag: 'limit',
        want: { in: 'query', kind: 'integer', required: false },
      },
    ],
    [
      'query boolean',
      { operationId: 'listComputers', flag: 'include-deleted', want: { in: 'query', kind: 'boolean' } },
    ],
    [
      'body map (labels)',
      { operationId: 'createComputer', flag: 'labels', want: { in: 'body', kind: 'map', required: false } },
    ],
    [
      'snake_case field',
      { operationId: 'createWorkspace', flag: 'display-name', want: { name: 'display_name', in: 'body' } },
    ],
    [
      'idempotency header, optional (the client adds one)',
      { operationId: 'createComputer', flag: 'idempotency-key', want: { in: 'header', required: false } },
    ],
    [
      'grant type enum',
      {
        operationId: 'exchangeToken',
        flag: 'grant-type',
        want: {
          in: 'body',
          choices: ['urn:ietf:params:oauth:grant-type:jwt-bearer', 'authorization_code', 'refresh_token'],
        },
      },
    ],
  ])('%s', (_name, { operationId, flag, want }) => {
    expect(find(operationId).options.find((o) => o.flag === flag)).toMatchObject(want);
  });

  test.each<[string, { operationId: string; want: Record<string, unknown> }]>([
    [
      'health needs no token',
      { operationId: 'getHealth', want: { auth: 'none', group: 'health', name: 'get' } },
    ],
    ['the token route exchanges its Bearer', { operationId: 'exchangeToken', want: { auth: 'credential' } }],
    [
      'create key writes a key file',
      { operationId: 'createKey', want: { writesKeyFile: true, auth: 'bearer' } },
    ],
    ['start is long-running', { operationId: 'startComputer', want: { longRunning: true, name: 'start' } }],
    [
      "a list of another noun gets that noun as its group; today's name stays as an alias",
      {
        operationId: 'listSizes',
        want: { group: 'sizes', name: 'list', legacy: { group: 'catalog', name: 'list-sizes' } },
      },
    ],
    [
      'start reads its computer again after --wait',
      {
        operationId: 'startComputer',
        want: { refetch: { path: '/workspaces/{workspace}/computers/{computer}' } },
      },
    ],
    [
      'create reads the new computer by id',
      {
        operationId: 'createComputer',
        want: { refetch: { path: '/workspaces/{workspace}/computers/{computer}', param: 'computer' } },
      },
    ],
  ])('%s', (_name, { operationId, want }) => {
    expect(find(operationId)).toMatchObject(want);
  });

  test.each<[string, string, string]>([
    ['listServiceAccounts', 'service-accounts', 'list'],
    ['getMe', 'identity', 'get-me'],
    ['restartComputer', 'computers', 'restart'],
    ['exchangeToken', 'auth', 'exchange-token'],
  ])('verbOf(%s, %s) = %s', (operationId, group, want) => {
    expect(verbOf(operationId, group)).toBe(want);
  });
});
