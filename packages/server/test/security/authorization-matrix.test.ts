// The authorization matrix of design §8: every operation of the spec × every kind of caller, each
// with real resources, asserting the exact status and code. Generated from listOperations(spec): a
// new operation joins by itself, and fails until support/permissions.ts gives it a class.
import type { OperationInfo } from '@svc/contract';
import {
  byteRequestBody,
  listOperations,
  loadDocument,
  operationParameters,
  operationPolicy,
  operationResponses,
  requestBody,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { KeyFile } from '../../src/identity/auth/keypair.js';
import { newId } from '../../src/platform/ids.js';
import { tarOf } from '../files/file-rules.js';
import { describeEngines } from '../support/databases.js';
import type { Harness } from './support/harness.js';
import { settle, startHarness } from './support/harness.js';
import type { PermissionClass, Role } from './support/permissions.js';
import { NEEDS, PERMISSIONS, RANK, REACH, REACH_EXEMPT } from './support/permissions.js';
import { resolver } from './support/schema-arbitrary.js';

const document = loadDocument();
const operations = listOperations(document);
const resolve = resolver(document);

/** The callers of the matrix: the four roles, a non-member, and a service account holding a role. */
const CALLERS = ['owner', 'admin', 'editor', 'viewer', 'non-member', 'service-account(editor)'] as const;
type Caller = (typeof CALLERS)[number];
const ROLE_OF: Record<Caller, Role | undefined> = {
  owner: 'owner',
  admin: 'admin',
  editor: 'editor',
  viewer: 'viewer',
  'non-member': undefined,
  'service-account(editor)': 'editor',
};

/** What the case must answer: exact status, and the error code when it is an error. */
interface Want {
  status: number;
  code?: string;
}

/** The operation's documented success status (its only 2xx). */
function successStatus(op: OperationInfo): number {
  const statuses = operationResponses(document, op)
    .map((r) => r.status)
    .filter((s) => s.startsWith('2'));
  if (statuses.length !== 1)
    throw new Error(`${op.operationId} documents ${statuses.length} success statuses`);
  return Number(statuses[0]);
}

function want(op: OperationInfo, cls: PermissionClass, caller: Caller): Want {
  if (cls === 'public' || cls === 'principal') return { status: successStatus(op) };
  // An access token is never accepted in an assertion's place (design §7), whoever holds it.
  if (cls === 'credential') return { status: 401, code: 'unauthenticated' };
  const role = ROLE_OF[caller];
  if (!role) return { status: 404, code: 'not_found' };
  if (RANK[role] < RANK[NEEDS[cls]]) return { status: 403, code: 'permission_denied' };
  return { status: successStatus(op) };
}

function hasIdempotencyKey(op: OperationInfo): boolean {
  return operationParameters(document, op).some(
    (p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
  );
}

/** The spec's first request-body example, deep-copied (the matrix sends what the docs show). */
function exampleBody(op: OperationInfo): Record<string, unknown> | undefined {
  const media = requestBody(document, op)?.content['application/json'];
  const examples = media?.examples as Record<string, unknown> | undefined;
  const first = examples ? resolve(Object.values(examples)[0]) : undefined;
  return first?.value === undefined ? undefined : structuredClone(first.value as Record<string, unknown>);
}

describe('the permission map', () => {
  test('gives every operation of the spec a permission class (design §8)', () => {
    const missing = operations.map((op) => op.operationId).filter((id) => !(id in PERMISSIONS));
    expect(
      missing,
      `add these operations to test/security/support/permissions.ts with their permission class: ${missing.join(', ')}`,
    ).toEqual([]);
  });

  test('agrees with the permission each operation declares in the spec (x-svc.permission)', () => {
    // The table is written from design §8, apart from the spec; the server takes its permissions from
    // the spec. Where the two differ, one of them is wrong: decide which, do not copy one into the other.
    const disagree = operations
      .map((op) => ({ id: op.operationId, spec: operationPolicy(document, op).permission }))
      .filter(({ id, spec }) => id in PERMISSIONS && PERMISSIONS[id] !== spec)
      .map(
        ({ id, spec }) =>
          `${id}: the spec declares ${spec}, test/security/support/permissions.ts ${PERMISSIONS[id]}`,
      );
    expect(disagree).toEqual([]);
  });

  test('names no operation the spec does not have', () => {
    const known = new Set(operations.map((op) => op.operationId));
    expect(Object.keys(PERMISSIONS).filter((id) => !known.has(id))).toEqual([]);
    expect(Object.keys({ ...REACH, ...REACH_EXEMPT }).filter((id) => !known.has(id))).toEqual([]);
  });

  test('decides the cross-workspace reach of every operation that names a principal', () => {
    const naming = operations
      .filter(
        (op) => /\{(service_account|member)\}/.test(op.path) || 'principal_id' in (exampleBody(op) ?? {}),
      )
      .map((op) => op.operationId);
    const undecided = naming.filter((id) => !(id in REACH) && !(id in REACH_EXEMPT));
    expect(
      undecided,
      `add these operations to REACH or REACH_EXEMPT in test/security/support/permissions.ts: ${undecided.join(', ')}`,
    ).toEqual([]);
  });
});

describeEngines('authorization matrix (design §8)', (engine) => {
  let h: Harness;
  const tokens = {} as Record<Caller, string>;
  const principalIds = {} as Record<Caller, string>;
  let ws: string;

  beforeAll(async () => {
    h = await startHarness(await engine.open());
    ws = h.workspace.id;
    tokens.owner = h.ownerToken;
    principalIds.owner = h.ownerUserId;
    for (const role of ['admin', 'editor', 'viewer'] as const) {
      const user = await h.user(`matrix-${role}-${newId().slice(-6)}`);
      await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/members`, {
        token: h.ownerToken,
        idempotencyKey: true,
        json: { principal_id: user.id, role },
      });
      tokens[role] = user.token;
      principalIds[role] = user.id;
    }
    // A non-member who owns a workspace of their own: being an owner elsewhere must not help.
    const outsider = await h.user(`matrix-outsider-${newId().slice(-6)}`);
    await h.expectCall(201, 'POST', '/v1/workspaces', {
      token: outsider.token,
      idempotencyKey: true,
      json: { name: `outsider-${newId().slice(-8)}` },
    });
    tokens['non-member'] = outsider.token;
    principalIds['non-member'] = outsider.id;
    // A service account of the workspace with the editor role, authenticated by its own key.
    const sa = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts`, {
      token: h.ownerToken,
      idempotencyKey: true,
      json: { name: `matrix-robot-${newId().slice(-6)}`, role: 'editor' },
    });
    const saId = (sa.service_account as { id: string }).id;
    const key = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts/${saId}/keys`, {
      token: h.ownerToken,
      idempotencyKey: true,
    });
    tokens['service-account(editor)'] = await h.exchange((key.key as { key_file: KeyFile }).key_file);
    principalIds['service-account(editor)'] = saId;
  });
  afterAll(() => h.close());

  const owner = () => ({ token: h.ownerToken, idempotencyKey: true as const });
  const fresh = (prefix: string) => `${prefix}-${newId().slice(-10)}`;

  /**
   * A computer of `workspace`, settled into `state` through the API: running, stopped, or failed (the
   * simulated driver told to fail its create).
   */
  async function computer(
    workspace: string,
    state: 'running' | 'stopped' | 'failed',
    image = 'ubuntu-2404',
  ): Promise<{ id: string; operation: string }> {
    const created = await h.expectCall(202, 'POST', `/v1/workspaces/${workspace}/computers`, {
      ...owner(),
      json: {
        name: fresh('m'),
        size: 'small',
        image,
        ...(state === 'failed' ? { labels: { 'sim-fail': 'create' } } : {}),
      },
    });
    const id = (created.computer as { id: string }).id;
    const operation = (created.operations as { id: string }[])[0]?.id as string;
    expect(await settle(h, h.ownerToken, operation)).toBe(state === 'failed' ? 'failed' : 'succeeded');
    if (state === 'stopped') {
      const stopped = await h.expectCall(
        202,
        'POST',
        `/v1/workspaces/${workspace}/computers/${id}/stop`,
        owner(),
      );
      expect(await settle(h, h.ownerToken, (stopped.operations as { id: string }[])[0]?.id as string)).toBe(
        'succeeded',
      );
    }
    return { id, operation };
  }

  async function serviceAccount(workspace: string): Promise<string> {
    const sa = await h.expectCall(201, 'POST', `/v1/workspaces/${workspace}/service-accounts`, {
      ...owner(),
      json: { name: fresh('sa'), role: 'viewer' },
    });
    return (sa.service_account as { id: string }).id;
  }

  /** A workspace of its own for the owner-class cases (they change or delete it), with every caller in it. */
  async function ownWorkspace(): Promise<string> {
    const created = await h.expectCall(201, 'POST', '/v1/workspaces', {
      ...owner(),
      json: { name: fresh('mw') },
    });
    const id = (created.workspace as { id: string }).id;
    for (const caller of ['admin', 'editor', 'viewer', 'service-account(editor)'] as const) {
      await h.expectCall(201, 'POST', `/v1/workspaces/${id}/members`, {
        ...owner(),
        json: { principal_id: principalIds[caller], role: ROLE_OF[caller] },
      });
    }
    return id;
  }

  /**
   * Real resources for one case, keyed by the spec's path-parameter names. A new parameter name
   * fails here, saying which one needs a fixture.
   */
  async function pathParams(op: OperationInfo, cls: PermissionClass): Promise<Record<string, string>> {
    const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    const params: Record<string, string> = {};
    const workspace = cls === 'owner' ? await ownWorkspace() : ws;
    let serviceAccountId: string | undefined;
    for (const name of names) {
      switch (name) {
        case 'workspace':
          params[name] = workspace;
          break;
        case 'computer':
          params[name] = (
            await computer(
              workspace,
              op.operationId === 'startComputer'
                ? 'stopped'
                : op.operationId === 'recoverComputer'
                  ? 'failed'
                  : 'running',
              // A screen is a display image's (design §18).
              /\/(screen|input)(\/|$)/.test(op.path) ? 'debian-13-desktop' : undefined,
            )
          ).id;
          break;
        case 'operation': {
          const { id, operation } = await computer(workspace, 'running');
          params[name] = operation;
          // A command's output is a command's: its operation is one that ran a command.
          if (op.operationId === 'streamOperationOutput') {
            const run = await h.expectCall(202, 'POST', `/v1/workspaces/${workspace}/computers/${id}/run`, {
              ...owner(),
              json: { argv: ['echo', 'matrix'] },
            });
            params[name] = (run.operations as { id: string }[])[0]?.id as string;
          }
          break;
        }
        case 'member': {
          const user = await h.user(fresh('target'));
          const member = await h.expectCall(201, 'POST', `/v1/workspaces/${workspace}/members`, {
            ...owner(),
            json: { principal_id: user.id, role: 'viewer' },
          });
          params[name] = (member.member as { id: string }).id;
          break;
        }
        case 'service_account':
          serviceAccountId = await serviceAccount(workspace);
          params[name] = serviceAccountId;
          break;
        case 'key': {
          const sa = serviceAccountId ?? (await serviceAccount(workspace));
          const key = await h.expectCall(
            201,
            'POST',
            `/v1/workspaces/${workspace}/service-accounts/${sa}/keys`,
            owner(),
          );
          params[name] = (key.key as { id: string }).id;
          break;
        }
        case 'webhook_endpoint': {
          const created = await h.expectCall(201, 'POST', `/v1/workspaces/${workspace}/webhook-endpoints`, {
            ...owner(),
            json: { url: 'https://hooks.example.com/in', event_types: ['*'] },
          });
          params[name] = (created.webhook_endpoint as { id: string }).id;
          break;
        }
        case 'delivery': {
          const endpoint = params.webhook_endpoint as string;
          const queued = await h.expectCall(
            200,
            'POST',
            `/v1/workspaces/${workspace}/webhook-endpoints/${endpoint}/test`,
            { ...owner(), json: { event_type: 'computer.created' } },
          );
          params[name] = (queued.webhook_delivery as { id: string }).id;
          // Finished, so that a redelivery is allowed (a pending one is 409 for every role).
          await h.db.query(
            `UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, lease_owner = NULL,
                lease_until = NULL WHERE id = $1`,
            [params[name]],
          );
          break;
        }
        case 'snapshot': {
          const source = await computer(workspace, 'running');
          const made = await h.expectCall(202, 'POST', `/v1/workspaces/${workspace}/snapshots`, {
            ...owner(),
            json: { name: fresh('s'), computer: source.id },
          });
          expect(await settle(h, h.ownerToken, (made.operations as { id: string }[])[0]?.id as string)).toBe(
            'succeeded',
          );
          params[name] = (made.snapshot as { id: string }).id;
          break;
        }
        case 'terminal': {
          // An open terminal on the (running) computer named before it.
          const opened = await h.expectCall(
            201,
            'POST',
            `/v1/workspaces/${workspace}/computers/${params.computer}/terminals`,
            { ...owner(), json: { cols: 80, rows: 24 } },
          );
          params[name] = (opened.terminal as { id: string }).id;
          break;
        }
        default:
          throw new Error(
            `${op.operationId}: no matrix fixture for path parameter {${name}}; add one in pathParams()`,
          );
      }
    }
    return params;
  }

  /** The spec's example body, made fresh (unique names, a new principal) and non-owner (roles). */
  async function body(op: OperationInfo): Promise<Record<string, unknown> | undefined> {
    const value = exampleBody(op);
    if (!value) return undefined;
    if (op.operationId === 'exchangeToken') return undefined;
    if (typeof value.name === 'string') value.name = fresh('n');
    if (typeof value.principal_id === 'string') value.principal_id = (await h.user(fresh('new'))).id;
    // Owner grants are the owner class's business (checked below); here the role is an ordinary one.
    if (typeof value.role === 'string') value.role = op.operationId === 'updateMember' ? 'editor' : 'viewer';
    if (typeof value.expires_at === 'string')
      value.expires_at = new Date(Date.now() + 86_400_000).toISOString();
    // A snapshot is taken of a real computer of the workspace.
    if (op.operationId === 'createSnapshot') value.computer = (await computer(ws, 'running')).id;
    return value;
  }

  /**
   * The query and byte body of a files operation (its required `?path=`), with what it reaches made
   * first as the owner: a file to read, stat or delete, a place to write. A new required query
   * parameter fails here, saying which operation needs a fixture.
   */
  async function filesRequest(
    op: OperationInfo,
    base: string,
  ): Promise<{ query: string; raw?: Uint8Array; contentType?: string }> {
    // A terminal's input: keystrokes.
    if (op.operationId === 'sendComputerTerminalInput')
      return {
        query: '',
        raw: new TextEncoder().encode('echo matrix\r'),
        contentType: 'application/octet-stream',
      };
    const required = operationParameters(document, op).filter((p) => p.in === 'query' && p.required);
    if (required.length === 0) return { query: '' };
    if (required.some((p) => p.name !== 'path'))
      throw new Error(
        `${op.operationId}: no matrix fixture for its required query; add one in filesRequest()`,
      );
    const file = `/home/svc/${fresh('f')}.txt`;
    const bytes = byteRequestBody(document, op);
    const at = (path: string, more = '') => `?path=${encodeURIComponent(path)}${more}`;
    switch (op.operationId) {
      case 'downloadComputerFile':
      case 'getComputerFile':
      case 'deleteComputerFile':
        await h.expectCall(200, 'PUT', `${base}/files${at(file)}`, {
          token: h.ownerToken,
          raw: new TextEncoder().encode('matrix'),
          contentType: 'application/octet-stream',
        });
        return { query: at(file) };
      case 'listComputerFiles':
      case 'downloadComputerArchive':
        return { query: at('/home/svc') };
      case 'uploadComputerFile':
        return {
          query: at(file),
          raw: new TextEncoder().encode('matrix'),
          contentType: bytes?.mediaType as string,
        };
      case 'uploadComputerArchive':
        return {
          query: at(`/home/svc/${fresh('d')}`, '&parents=true'),
          raw: await tarOf([[{ name: 'a.txt' }, 'matrix']]),
          contentType: bytes?.mediaType as string,
        };
      default:
        throw new Error(`${op.operationId}: no matrix fixture for ?path=; add one in filesRequest()`);
    }
  }

  const cases = operations.flatMap((op) => CALLERS.map((caller) => [op.operationId, caller, op] as const));

  test.each(cases)('%s as %s', async (operationId, caller, op) => {
    const cls = PERMISSIONS[operationId];
    if (!cls)
      throw new Error(`${operationId} has no permission class in test/security/support/permissions.ts`);
    const params = await pathParams(op, cls);
    const path = `/v1${op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] as string))}`;
    const json = await body(op);
    const files = await filesRequest(op, path.replace(/\/files(\/.*)?$/, ''));
    const answer = await h.call(op.method.toUpperCase(), `${path}${files.query}`, {
      ...(cls === 'public' ? {} : { token: tokens[caller] }),
      ...(hasIdempotencyKey(op) ? { idempotencyKey: true as const } : {}),
      ...(json === undefined ? {} : { json }),
      ...(files.raw === undefined ? {} : { raw: files.raw, contentType: files.contentType ?? null }),
    });
    const expected = want(op, cls, caller);
    const got: Want = { status: answer.status };
    const code = (answer.body as { error?: { code?: string } } | undefined)?.error?.code;
    if (code !== undefined) got.code = code;
    expect(
      got,
      `${op.method.toUpperCase()} ${op.path} as ${caller} (${cls}): ${answer.text.slice(0, 300)}`,
    ).toEqual(expected);
  });

  // The owner row of §8 also covers granting and revoking `owner` on members and service accounts.
  test.each(['admin', 'owner'] as const)('granting and revoking owner as %s', async (caller) => {
    const allowed = caller === 'owner';
    const user = await h.user(fresh('grantee'));
    const grant = await h.call('POST', `/v1/workspaces/${ws}/members`, {
      token: tokens[caller],
      idempotencyKey: true,
      json: { principal_id: user.id, role: 'owner' },
    });
    expect(grant.status, grant.text).toBe(allowed ? 201 : 403);
    const viewer = await h.user(fresh('promotee'));
    const member = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/members`, {
      ...owner(),
      json: { principal_id: viewer.id, role: 'viewer' },
    });
    const memberId = (member.member as { id: string }).id;
    const promote = await h.call('PATCH', `/v1/workspaces/${ws}/members/${memberId}`, {
      token: tokens[caller],
      idempotencyKey: true,
      json: { role: 'owner' },
    });
    expect(promote.status, promote.text).toBe(allowed ? 200 : 403);
    const sa = await h.call('POST', `/v1/workspaces/${ws}/service-accounts`, {
      token: tokens[caller],
      idempotencyKey: true,
      json: { name: fresh('owner-sa'), role: 'owner' },
    });
    expect(sa.status, sa.text).toBe(allowed ? 201 : 403);
    if (!allowed) {
      for (const answer of [grant, promote, sa])
        expect((answer.body as { error: { code: string } }).error.code).toBe('permission_denied');
      // Revoking: the admin cannot demote or remove an existing owner.
      const { rows } = await h.db.query<{ id: string }>(
        `SELECT id FROM members WHERE workspace_id = $1 AND principal_id = $2`,
        [ws, h.ownerUserId],
      );
      const ownerMember = rows[0]?.id as string;
      const demote = await h.call('PATCH', `/v1/workspaces/${ws}/members/${ownerMember}`, {
        token: tokens[caller],
        idempotencyKey: true,
        json: { role: 'viewer' },
      });
      expect([demote.status, (demote.body as { error: { code: string } }).error.code]).toEqual([
        403,
        'permission_denied',
      ]);
      const remove = await h.call('DELETE', `/v1/workspaces/${ws}/members/${ownerMember}`, {
        token: tokens[caller],
      });
      expect([remove.status, (remove.body as { error: { code: string } }).error.code]).toEqual([
        403,
        'permission_denied',
      ]);
    }
  });
  // Escalation across workspaces (SECURITY.md, "principal reach"): a service account of `home` holds
  // `held` in another workspace; the caller is admin of `home` (and of the workspace a membership
  // operation runs in) and holds `mine` (or nothing) in that other workspace. Generated from REACH:
  // every operation that hands out, reads or changes what a principal can do.
  const OTHER_ROLES = ['none', 'viewer', 'editor', 'admin', 'owner'] as const;
  const reachCases = operations
    .filter((op) => op.operationId in REACH)
    .flatMap((op) =>
      (['editor', 'owner'] as const).flatMap((held) =>
        OTHER_ROLES.map((mine) => [op.operationId, held, mine, op] as const),
      ),
    );

  const workspaceNames = new Map<string, string>();
  async function workspaceWith(members: [string, Role][]): Promise<string> {
    const name = fresh('rw');
    const created = await h.expectCall(201, 'POST', '/v1/workspaces', { ...owner(), json: { name } });
    const id = (created.workspace as { id: string }).id;
    workspaceNames.set(id, name);
    for (const [principal, role] of members)
      await h.expectCall(201, 'POST', `/v1/workspaces/${id}/members`, {
        ...owner(),
        json: { principal_id: principal, role },
      });
    return id;
  }

  test.each(reachCases)(
    '%s on a service account that is %s elsewhere, by a home admin who is %s there',
    async (operationId, held, mine, op) => {
      const caller = await h.user(fresh('reach'));
      const home = await workspaceWith([[caller.id, 'admin']]);
      const account = await h.expectCall(201, 'POST', `/v1/workspaces/${home}/service-accounts`, {
        ...owner(),
        json: { name: fresh('sa'), role: 'viewer' },
      });
      const sa = (account.service_account as { id: string }).id;
      const other = await workspaceWith([
        [sa, held],
        ...(mine === 'none' ? [] : [[caller.id, mine] as [string, Role]]),
      ]);
      const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
      // Membership operations run in a third workspace the caller administers; the rest in `home`.
      const onServiceAccount = names.includes('service_account');
      const workspace = onServiceAccount ? home : await workspaceWith([[caller.id, 'admin']]);
      const params: Record<string, string> = { workspace, service_account: sa };
      if (names.includes('key')) {
        const key = await h.expectCall(
          201,
          'POST',
          `/v1/workspaces/${home}/service-accounts/${sa}/keys`,
          owner(),
        );
        params.key = (key.key as { id: string }).id;
      }
      if (names.includes('member')) {
        const member = await h.expectCall(201, 'POST', `/v1/workspaces/${workspace}/members`, {
          ...owner(),
          json: { principal_id: sa, role: 'viewer' },
        });
        params.member = (member.member as { id: string }).id;
      }
      const unknown = names.filter((name) => !(name in params));
      if (unknown.length > 0)
        throw new Error(`${operationId}: no reach fixture for {${unknown.join('}, {')}}`);
      const json = exampleBody(op);
      if (json) {
        if (typeof json.name === 'string') json.name = fresh('n');
        if (typeof json.principal_id === 'string') json.principal_id = sa;
        if (typeof json.role === 'string')
          json.role = op.operationId === 'createMember' ? 'viewer' : 'editor';
        if (typeof json.expires_at === 'string')
          json.expires_at = new Date(Date.now() + 86_400_000).toISOString();
      }
      const path = `/v1${op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] as string))}`;
      const answer = await h.call(op.method.toUpperCase(), path, {
        token: caller.token,
        ...(hasIdempotencyKey(op) ? { idempotencyKey: true as const } : {}),
        ...(json === undefined ? {} : { json }),
      });
      const covers = mine !== 'none' && (REACH[operationId] === 'read' || RANK[mine] >= RANK[held]);
      const expected: Want = covers
        ? { status: successStatus(op) }
        : { status: 403, code: 'permission_denied' };
      const got: Want = { status: answer.status };
      const code = (answer.body as { error?: { code?: string } } | undefined)?.error?.code;
      if (code !== undefined) got.code = code;
      expect(got, `${op.method.toUpperCase()} ${op.path}: ${answer.text.slice(0, 300)}`).toEqual(expected);
      // A refusal never names a workspace the caller is not a member of.
      if (mine === 'none') {
        expect(answer.text).not.toContain(other);
        expect(answer.text).not.toContain(workspaceNames.get(other) as string);
      }
    },
  );
});
