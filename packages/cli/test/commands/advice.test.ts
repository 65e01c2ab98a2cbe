// What svc says to type next after the API refused a command (src/commands/advice.ts), against a
// fake API: every case makes the refusal, then checks the lines after it and the requests sent.
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { envelope, fakeApi, type Seen, svc } from '../support/io.js';

const BASE = 'https://svc.test/v1';
const env = { SVC_BASE_URL: BASE, SVC_ACCESS_TOKEN: 'header.payload.signature' };
const CREATE = ['computers', 'create', 'dev', '--size', 'small', '--image', 'ubuntu-2404'];
const LOCAL = fileURLToPath(import.meta.url);

type Routes = Parameters<typeof fakeApi>[0];
type Answer = ReturnType<Routes[string]>;

const refuse =
  (status: number, code: string, message: string, details: Record<string, unknown> = {}) =>
  (): Answer => ({ status, body: envelope(code, message, 'req-1', details) });
const workspaces = (): Answer => ({
  status: 200,
  body: {
    workspaces: [
      { id: 'w1', name: 'dev' },
      { id: 'w2', name: 'staging' },
    ],
    has_more: false,
  },
});
const computers = (): Answer => ({
  status: 200,
  body: {
    computers: [
      { id: 'c1', name: 'box' },
      { id: 'c2', name: 'idle' },
    ],
    has_more: false,
  },
});

describe('after a refusal, what to type next', () => {
  test.each<
    [
      string,
      {
        given: string[];
        routes: Routes;
        want: { code: number; says: string[]; never?: string[]; sent?: (seen: Seen[]) => void };
      },
    ]
  >([
    [
      'a workspace not found: the near name, one list request',
      {
        given: ['computers', 'list', 'dve'],
        routes: {
          'GET /workspaces/dve/computers': refuse(404, 'not_found', 'workspace dve not found'),
          'GET /workspaces': workspaces,
        },
        want: {
          code: 4,
          says: [
            'did you mean "dev"? svc computers list dev',
            'the workspaces you can see: svc workspaces list',
          ],
          sent: (seen) =>
            expect(seen.map((s) => s.url.pathname)).toEqual([
              '/v1/workspaces/dve/computers',
              '/v1/workspaces',
            ]),
        },
      },
    ],
    [
      'a computer not found: the near name among the workspace’s computers',
      {
        given: ['computers', 'get', 'dev', 'bxo', '-o', 'json'],
        routes: {
          'GET /workspaces/dev/computers/bxo': refuse(
            404,
            'not_found',
            'computer bxo not found in this workspace',
          ),
          'GET /workspaces/dev/computers': computers,
        },
        want: {
          code: 4,
          says: ['did you mean "box"? svc computers get dev box -o json', 'svc computers list dev'],
        },
      },
    ],
    [
      'a name not near any: only how to list them',
      {
        given: ['computers', 'get', 'dev', 'production'],
        routes: {
          'GET /workspaces/dev/computers/production': refuse(
            404,
            'not_found',
            'computer production not found',
          ),
          'GET /workspaces/dev/computers': computers,
        },
        want: {
          code: 4,
          says: ['the computers you can see: svc computers list dev'],
          never: ['did you mean'],
        },
      },
    ],
    [
      'svc computers cp to a misspelt computer: not a missing directory, the near name',
      {
        given: ['computers', 'cp', LOCAL, 'dev/bxo:/home/svc/'],
        routes: {
          'GET /workspaces/dev/computers/bxo/files/stat': refuse(404, 'not_found', 'computer bxo not found'),
          'GET /workspaces/dev/computers': computers,
        },
        want: {
          code: 4,
          says: [
            'error: computer bxo not found',
            `did you mean "box"? svc computers cp ${LOCAL} dev/box:/home/svc/`,
            'svc computers list dev',
          ],
          never: ['no such directory'],
        },
      },
    ],
    [
      'the list refused too: the hint without names, and nothing more asked',
      {
        given: ['computers', 'list', 'dve'],
        routes: {
          'GET /workspaces/dve/computers': refuse(404, 'not_found', 'workspace dve not found'),
          'GET /workspaces': refuse(500, 'internal', 'broken'),
        },
        want: {
          code: 4,
          says: ['error: workspace dve not found', 'svc workspaces list'],
          never: ['did you mean', 'broken'],
          sent: (seen) => expect(seen).toHaveLength(2),
        },
      },
    ],
    [
      'a file not found in a computer: no names listed',
      {
        given: ['computers', 'get-file', 'dev', 'box', '--path', '/home/svc/nope'],
        routes: {
          'GET /workspaces/dev/computers/box/files/stat': refuse(
            404,
            'not_found',
            '/home/svc/nope: no such file',
            {
              path: '/home/svc/nope',
            },
          ),
        },
        want: {
          code: 4,
          says: ['no such file'],
          never: ['you can see'],
          sent: (seen) => expect(seen).toHaveLength(1),
        },
      },
    ],
    [
      'a stopped computer: start it',
      {
        given: ['computers', 'exec', 'dev', 'box', '--', 'ls'],
        routes: {
          'POST /workspaces/dev/computers/box/exec': refuse(409, 'invalid_state', 'computer box is stopped', {
            current_state: 'stopped',
            allowed_from: ['running'],
          }),
        },
        want: { code: 5, says: ['start it first: svc computers start dev box'] },
      },
    ],
    [
      'a computer between states: wait for one the action is allowed from',
      {
        given: ['computers', 'exec', 'dev', 'box', '--', 'ls'],
        routes: {
          'POST /workspaces/dev/computers/box/exec': refuse(
            409,
            'invalid_state',
            'computer box is starting',
            {
              current_state: 'starting',
              allowed_from: ['running'],
            },
          ),
        },
        want: {
          code: 5,
          says: [
            'it is starting: wait until it rests (svc computers wait dev box --for running,stopped,failed,deleted,unknown), then run this again',
          ],
          never: ['start it'],
        },
      },
    ],
    [
      'stopping a stopped computer: no hint',
      {
        given: ['computers', 'stop', 'dev', 'box'],
        routes: {
          'POST /workspaces/dev/computers/box/stop': refuse(409, 'invalid_state', 'computer box is stopped', {
            current_state: 'stopped',
            allowed_from: ['running'],
          }),
        },
        want: { code: 5, says: ['is stopped'], never: ['start it', 'wait for it'] },
      },
    ],
    [
      'a name taken: delete the one that has it, or another name',
      {
        given: [...CREATE, '--name', 'box'],
        routes: {
          'POST /workspaces/dev/computers': refuse(
            409,
            'already_exists',
            'a computer named box already exists',
          ),
        },
        want: {
          code: 5,
          says: ['delete the one named box (svc computers delete dev box) or choose another --name'],
        },
      },
    ],
    [
      'an image not available when the create ran: the command that lists images',
      {
        given: [...CREATE, '--name', 'box', '--wait'],
        routes: {
          'POST /workspaces/dev/computers': () => ({
            status: 202,
            body: {
              computer: { id: 'c1', name: 'box', state: 'creating' },
              operations: [{ id: 'op1', type: 'computer.create', state: 'pending', progress: 0 }],
            },
          }),
          'GET /operations/op1': () => ({
            status: 200,
            body: {
              operation: {
                id: 'op1',
                type: 'computer.create',
                state: 'failed',
                progress: 0,
                error: {
                  code: 'unavailable',
                  message: 'the image "ubuntu-2404" is not available on this host yet',
                  details: {},
                  request_id: 'r',
                },
              },
            },
          }),
        },
        want: { code: 1, says: ['is not available', 'the values of --image: svc images list'] },
      },
    ],
    [
      'no room for the size: the command that lists sizes',
      {
        given: [...CREATE, '--name', 'big'],
        routes: {
          'POST /workspaces/dev/computers': refuse(
            503,
            'unavailable',
            'no host has room for a computer of size small now',
            {
              reason: 'no_capacity',
              resource: 'vcpus',
            },
          ),
        },
        want: {
          code: 1,
          says: ['reason: no_capacity (short of vcpus)', 'the values of --size: svc sizes list'],
        },
      },
    ],
    [
      'field violations: the flag, and the pattern in words',
      {
        given: [...CREATE, '--name', 'Box-3', '--labels', 'Team=a'],
        routes: {
          'POST /workspaces/dev/computers': refuse(
            400,
            'invalid_argument',
            'one or more fields are invalid',
            {
              field_violations: [
                { field: 'name', description: 'must match pattern "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"' },
                { field: 'labels.Team', description: 'is not a known field' },
                { field: 'size', description: 'no size named small; see GET /sizes' },
                { field: 'header.Idempotency-Key', description: 'must be at most 255 characters' },
              ],
            },
          ),
        },
        want: {
          code: 1,
          says: [
            '  --name: must be lowercase letters, digits and \'-\', 1 to 63 characters, starting and ending with a letter or digit (not "Box-3")\n',
            '  --labels Team: is not a valid key: a key must be lowercase letters',
            '  --size: no size named small; see svc sizes list\n',
            '  --idempotency-key: must be at most 255 characters\n',
          ],
          never: ['must match pattern', 'GET /sizes'],
        },
      },
    ],
  ])('%s', async (_name, { given, routes, want }) => {
    const api = fakeApi(routes);
    const outcome = await svc(given, { env, fetch: api.fetch });
    expect(outcome.code, outcome.stderr).toBe(want.code);
    for (const text of want.says) expect(outcome.stderr).toContain(text);
    for (const text of want.never ?? []) expect(outcome.stderr).not.toContain(text);
    want.sent?.(api.seen);
  });
});

describe('a JSON flag refused before any request', () => {
  test.each<[string, { value: string; says: string[] }]>([
    [
      'not JSON: where it failed, and the example',
      {
        value: '{idle_timeout_seconds:1800}',
        says: [
          "error: --lifetime is not valid JSON (Expected property name or '}' at position 1):\n  {idle_timeout_seconds:1800}\n   ^\n",
          `  for example: --lifetime '{"idle_timeout_seconds":1800,"expires_at":"2026-11-10T18:00:00Z","on_end":"delete"}'\n`,
          '  more: svc computers create --help\n',
          '  code: invalid_json\n',
        ],
      },
    ],
    [
      'an unknown field: the nearest and the known ones',
      {
        value: '{"idle_timeout":1800}',
        says: [
          'error: --lifetime: idle_timeout is not a field; did you mean "idle_timeout_seconds"? The fields: idle_timeout_seconds, expires_at, on_end.\n',
        ],
      },
    ],
    [
      'a type: in words',
      {
        value: '{"idle_timeout_seconds":"30m"}',
        says: [
          'error: --lifetime: idle_timeout_seconds must be a whole number of seconds from 60 to 2592000, or null (not "30m")\n',
        ],
      },
    ],
  ])('%s', async (_name, { value, says }) => {
    const api = fakeApi({});
    const outcome = await svc([...CREATE, '--name', 'box', '--lifetime', value], { env, fetch: api.fetch });
    expect(outcome.code).toBe(2);
    for (const text of says) expect(outcome.stderr).toContain(text);
    expect(outcome.stderr).not.toContain('Usage:');
    expect(api.seen).toHaveLength(0);
  });

  test('--help lists each JSON flag’s fields and an example', async () => {
    const { stdout } = await svc(['webhooks', 'update-endpoint', '--help']);
    expect(stdout).toContain('--event-types <json> is JSON: a list of 1 to 32 items, each an event type');
    expect(stdout).toContain(`for example: --event-types '["computer.created",`);
    const workspaces = (await svc(['workspaces', 'update', '--help'])).stdout;
    expect(workspaces).toMatch(
      /^ {2}max_lifetime_seconds {2}a whole number of seconds from 60 to 2592000, or null\./m,
    );
    expect(workspaces).toContain(`for example: --lifetime-defaults '{"idle_timeout_seconds":3600,`);
  });
});
