import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrateServerDatabase } from '../../src/compose/database.js';
import {
  COMPUTER_SHAPE,
  EVENT_SHAPES,
  KEY_SHAPE,
  renderComputer,
  renderKey,
  renderMember,
  renderOperation,
  renderServiceAccount,
  renderWorkspace,
  WORKSPACE_SHAPE,
} from '../../src/computers/render.js';
import { renderWorkspaceEvent } from '../../src/computers/render-events.js';
import { computerIn } from '../../src/computers/repositories/computers.js';
import { eventSnapshotSql, eventSnapshotStep } from '../../src/computers/repositories/event-snapshot.js';
import { operationById } from '../../src/computers/repositories/operations.js';
import { fieldsOf, shapeColumns } from '../../src/computers/wire-shape.js';
import { keyOf } from '../../src/identity/repositories/keys.js';
import { memberIn } from '../../src/identity/repositories/members.js';
import { serviceAccountIn } from '../../src/identity/repositories/service-accounts.js';
import { type WorkspaceRow, workspaceWithRole } from '../../src/identity/repositories/workspaces.js';
import type { Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { type Answer, openTestApp, type Team, type TestApp, unique } from '../support/app.js';
import { describeEngines, describePostgres } from '../support/databases.js';

// The event log's snapshot of a resource is SQL made from the resource's wire shape (render.ts,
// repositories/event-snapshot.ts). These hold the generator to its word: what the database keeps of a
// row renders to the very bytes the API renders of it, and the server installs that SQL exactly when
// it changed.

describeEngines('the event log keeps a resource as the API renders it', (engine) => {
  let t: TestApp;
  let db: Database;
  let team: Team;
  let ws: string;
  let computerId: string;
  let operationId: string;
  let accountId: string;
  let keyId: string;
  let memberId: string;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_RATE_LIMITS: 'off' } });
    db = t.db;
    team = await t.team();
    ws = `/v1/workspaces/${team.workspace.id}`;
    const ok = (answer: Answer, status: number) => {
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      return answer.body;
    };
    const token = team.owner.token;
    const made = ok(
      await t.call('POST', `${ws}/computers`, {
        token,
        body: { name: unique('pc'), size: 'small', image: 'debian-13', labels: { team: 'a' } },
      }),
      202,
    );
    computerId = made.computer.id;
    operationId = made.operations[0].id;
    ok(await t.call('GET', `/v1/operations/${operationId}?wait=30`, { token }), 200);
    accountId = ok(
      await t.call('POST', `${ws}/service-accounts`, {
        token,
        body: { name: unique('robot'), role: 'viewer' },
      }),
      201,
    ).service_account.id;
    keyId = ok(await t.call('POST', `${ws}/service-accounts/${accountId}/keys`, { token, body: {} }), 201).key
      .id;
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM members WHERE workspace_id = $1 AND principal_id = $2',
      [team.workspace.id, team.editor.id],
    );
    memberId = rows[0]?.id as string;
  });
  afterAll(() => t.close());

  /** The resource the database's snapshot of `kind` `id` holds, rendered as an event renders it. */
  async function fromLog(kind: string, id: string): Promise<string> {
    const { rows } = await db.query<{ data: Record<string, unknown> | null }>(
      'SELECT svc_event_snapshot($1, $2) AS data',
      [kind, id],
    );
    const data = rows[0]?.data;
    expect(data, `${kind} ${id}`).not.toBeNull();
    const event = renderWorkspaceEvent({
      id: 'event',
      workspace_id: team.workspace.id,
      sequence: 1,
      type: `${kind}.updated` as never,
      created_at: '2026-01-01T00:00:00.000Z',
      data: data as Record<string, unknown>,
    });
    return JSON.stringify((event as unknown as Record<string, unknown>)[kind]);
  }

  /** Each kind's row as the API reads it, rendered as the API renders it. */
  const fromApi: Record<string, (id: string) => Promise<unknown>> = {
    workspace: async (id) =>
      renderWorkspace((await workspaceWithRole(db, team.owner.id, id)) as WorkspaceRow),
    computer: async (id) => renderComputer(await computerIn(db, team.workspace.id, id)),
    operation: async (id) => {
      const row = await operationById(db, id);
      if (!row) throw new Error(`no operation ${id}`);
      return renderOperation(row, { result: false });
    },
    member: async (id) => renderMember(await memberIn(db, team.workspace.id, id)),
    service_account: async (id) => renderServiceAccount(await serviceAccountIn(db, team.workspace.id, id)),
    key: async (id) => renderKey(await keyOf(db, accountId, id)),
  };

  const ids = (): Record<string, string> => ({
    workspace: team.workspace.id,
    computer: computerId,
    operation: operationId,
    member: memberId,
    service_account: accountId,
    key: keyId,
  });

  // Each optional field set, then unset (or empty), so left-out and present keys both are compared.
  type Update = [sql: string, kinds: string[]];
  const states: [string, Update[]][] = [
    ['as the API made them', []],
    [
      'with every optional field set',
      [
        [
          `UPDATE workspaces SET lifetime_defaults = '{"idle_timeout_seconds": 600, "on_end": "delete"}',
                  display_name = 'Shown' WHERE id = $1`,
          ['workspace'],
        ],
        [
          `UPDATE computers SET idle_timeout_seconds = 60, expires_at = now() + interval '1 day', on_end = 'delete',
                  snapshot_id = 'snap', current_operation_id = $2, stopped_at = now() WHERE id = $1`,
          ['computer', 'operation'],
        ],
        [
          `UPDATE operations SET state = 'failed', trigger = 'idle_timeout', progress = 40,
                  error = '{"code": "internal", "message": "broke", "details": {"path": "/x", "driver": "y"}}'
            WHERE id = $1`,
          ['operation'],
        ],
        [
          `UPDATE keys SET expires_at = now() + interval '1 day', last_used_at = now() WHERE id = $1`,
          ['key'],
        ],
        [`UPDATE principals SET display_name = 'Robot' WHERE id = $1`, ['service_account']],
      ],
    ],
    [
      'with every optional field unset or empty',
      [
        [`UPDATE workspaces SET lifetime_defaults = NULL, display_name = '' WHERE id = $1`, ['workspace']],
        [
          `UPDATE computers SET idle_timeout_seconds = NULL, expires_at = NULL, snapshot_id = NULL,
                  current_operation_id = NULL, started_at = NULL, stopped_at = NULL, labels = '{}' WHERE id = $1`,
          ['computer'],
        ],
        [
          `UPDATE operations SET trigger = NULL, error = NULL, started_at = NULL, completed_at = NULL WHERE id = $1`,
          ['operation'],
        ],
        [`UPDATE keys SET expires_at = NULL, last_used_at = NULL, state = 'revoked' WHERE id = $1`, ['key']],
        [`UPDATE principals SET display_name = '' WHERE id = $1`, ['service_account']],
      ],
    ],
  ];

  test.each(states)(
    'every kind %s renders the same bytes from the log as from the API',
    async (_name, updates) => {
      const all = ids();
      for (const [sql, kinds] of updates)
        await db.query(
          sql,
          kinds.map((kind) => all[kind]),
        );
      for (const shape of EVENT_SHAPES) {
        const id = all[shape.kind] as string;
        const api = JSON.stringify(await (fromApi[shape.kind] as (id: string) => Promise<unknown>)(id));
        expect(await fromLog(shape.kind, id), shape.kind).toBe(api);
      }
    },
  );

  test('the snapshot holds exactly the values of the row the wire shapes read', async () => {
    const all = ids();
    for (const shape of EVENT_SHAPES) {
      const { rows } = await db.query<{ keys: string[] }>(
        'SELECT array(SELECT jsonb_object_keys(svc_event_snapshot($1, $2)) ORDER BY 1) AS keys',
        [shape.kind, all[shape.kind]],
      );
      const want = shapeColumns(shape as never)
        .map((column) => column.key)
        .sort();
      expect(rows[0]?.keys, shape.kind).toEqual(want);
    }
    // An operation's command output and stdin never reach the log.
    expect(shapeColumns(EVENT_SHAPES[2] as never).map((column) => column.key)).not.toContain('result');
  });
});

describeEngines('the snapshot functions, installed after the migrations', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await engine.open();
  });

  const installed = async () =>
    (
      await db.query<{ checksum: string; applied_at: Date; proc: string }>(
        `SELECT r.checksum, r.applied_at,
                (SELECT xmin::text FROM pg_proc WHERE proname = 'svc_event_snapshot') AS proc
           FROM schema_repeatables r WHERE r.name = 'event_snapshot'`,
      )
    ).rows[0];
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  test('a migrated database has them, under the checksum of what the server makes', async () => {
    expect((await installed())?.checksum).toBe(sha256(eventSnapshotSql()));
  });

  test('the same definition again is left alone', async () => {
    const before = await installed();
    expect(await migrateServerDatabase(db)).toEqual([]);
    expect(await installed()).toEqual(before);
  });

  test('a changed definition is installed, and the one after it replaces it again', async () => {
    const before = await installed();
    const owner = 'owner-of-a-changed-shape';
    await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [owner]);
    await db.query(`INSERT INTO workspaces (id, name, created_by) VALUES ('ws-shape', 'ws-shape', $1)`, [
      owner,
    ]);
    // A workspace that shows who made it: a field described once, in its shape.
    const f = fieldsOf<WorkspaceRow>();
    const widened = {
      ...WORKSPACE_SHAPE,
      fields: { ...WORKSPACE_SHAPE.fields, created_by: f.plain('created_by') },
    };
    const shapes = [widened, COMPUTER_SHAPE, KEY_SHAPE] as never[];
    await migrate(db, undefined, [{ name: 'event_snapshot', sql: eventSnapshotSql(shapes) }]);
    const changed = await installed();
    expect(changed?.checksum).toBe(sha256(eventSnapshotSql(shapes)));
    expect(changed?.proc).not.toBe(before?.proc);
    const read = async () =>
      (
        await db.query<{ data: Record<string, unknown> }>(
          `SELECT svc_event_snapshot('workspace', 'ws-shape') AS data`,
        )
      ).rows[0]?.data;
    expect(await read()).toMatchObject({ id: 'ws-shape', created_by: owner });
    // The server's own definition comes back as it starts.
    await migrate(db, undefined, [eventSnapshotStep()]);
    expect((await installed())?.checksum).toBe(before?.checksum);
    expect(await read()).not.toHaveProperty('created_by');
  });
});

describePostgres('the snapshot functions with several replicas', (engine) => {
  test('replicas starting at once install them once, and all start', async () => {
    const first = await engine.open({ migrate: false });
    const replicas = [first, ...(await Promise.all([1, 2, 3].map(() => engine.replica(first))))];
    const results = await Promise.all(replicas.map((db) => migrateServerDatabase(db)));
    expect(results.filter((applied) => applied.length > 0)).toHaveLength(1);
    const { rows } = await first.query<{ checksum: string }>('SELECT checksum FROM schema_repeatables');
    expect(rows).toEqual([{ checksum: createHash('sha256').update(eventSnapshotSql()).digest('hex') }]);
  });
});

describe('the SQL made from the wire shapes', () => {
  test('names each kind once, and each value of a row with one encoding', () => {
    const kinds = EVENT_SHAPES.map((shape) => shape.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    const sql = eventSnapshotSql();
    for (const kind of kinds) expect(sql).toContain(`WHEN '${kind}' THEN`);
  });
});
