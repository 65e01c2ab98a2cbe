import { afterAll, beforeAll, expect, test } from 'vitest';
import { housekeeping } from '../../src/compose/housekeeping.js';
import {
  firstRetainedWorkspaceEventSequence,
  lastWorkspaceEventSequence,
  WORKSPACE_EVENTS_CHANNEL,
  type WorkspaceEventRecord,
  workspaceEventsAfter,
} from '../../src/computers/repositories/events.js';
import type { Database } from '../../src/platform/db/database.js';
import { idTime, isId, newId } from '../../src/platform/ids.js';
import { type Answer, openTestApp, type TestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { schemaErrors } from '../support/spec-schemas.js';

// The workspace's event log (migration 013, design §14): every change made through the API, or by the
// worker, is one event in the transaction of the change, rendered as the API renders the resource.

/** The spec's schema of each event type's `data`, by the resource noun of the type. */
const SCHEMA_OF: Record<string, string> = {
  workspace: 'WorkspaceEvent',
  computer: 'ComputerEvent',
  operation: 'OperationEvent',
  member: 'MemberEvent',
  service_account: 'ServiceAccountEvent',
  key: 'KeyEvent',
};

const noun = (type: string) => type.slice(0, type.indexOf('.'));
/** The resource an event carries. */
// biome-ignore lint/suspicious/noExplicitAny: read loosely, checked against the spec's schema
const resourceOf = (event: WorkspaceEventRecord): any =>
  (event.data as Record<string, unknown>)[noun(event.type)];

/** Every event of the log is schema-valid and its envelope agrees with its record. */
function checkEvents(workspaceId: string, events: WorkspaceEventRecord[]): void {
  for (const event of events) {
    expect(schemaErrors(SCHEMA_OF[noun(event.type)] as string, event.data), event.type).toEqual([]);
    expect(schemaErrors('WorkspaceEventType', event.type)).toEqual([]);
    expect(event.data).toMatchObject({
      sequence: event.sequence,
      type: event.type,
      workspace_id: workspaceId,
    });
  }
}

describeEngines('workspace event log', (engine) => {
  let t: TestApp;
  let db: Database;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_RATE_LIMITS: 'off' } });
    db = t.db;
  });
  afterAll(() => t.close());

  /** What the log gained since `after` while `change` ran. */
  async function eventsOf(
    workspaceId: string,
    change: () => Promise<unknown>,
  ): Promise<WorkspaceEventRecord[]> {
    const after = await lastWorkspaceEventSequence(db, workspaceId);
    await change();
    const events = await workspaceEventsAfter(db, workspaceId, after, 1000);
    checkEvents(workspaceId, events);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, i) => after + 1 + i));
    return events;
  }
  const ok = (answer: Answer, status = 200) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    return answer.body;
  };
  const waitFor = async (token: string, operationId: string) => {
    const done = ok(await t.call('GET', `/v1/operations/${operationId}?wait=30`, { token }));
    expect(done.operation.state).toBe('succeeded');
    return done.operation;
  };

  test('each change through the API is one event of its type, the resource exactly as the API renders it', async () => {
    const owner = await t.user();
    let workspace: { id: string; name: string } = { id: '', name: '' };
    const created = await t.call('POST', '/v1/workspaces', {
      token: owner.token,
      body: { name: unique('ws') },
    });
    workspace = ok(created, 201).workspace;
    const ws = `/v1/workspaces/${workspace.id}`;
    const token = owner.token;
    // Creating a workspace: its owner's membership is the log's first event.
    const first = await workspaceEventsAfter(db, workspace.id, 0, 10);
    expect(first.map((event) => event.type)).toEqual(['member.created']);
    checkEvents(workspace.id, first);

    const one = async (type: string, change: () => Promise<Answer>, status = 200) => {
      let answer: Answer | undefined;
      const events = await eventsOf(workspace.id, async () => {
        answer = await change();
      });
      const body = ok(answer as Answer, status);
      expect(events.map((event) => event.type)).toEqual([type]);
      return { body, event: events[0] as WorkspaceEventRecord };
    };

    const renamed = await one('workspace.updated', () =>
      t.call('PATCH', ws, { token, body: { display_name: 'Renamed' } }),
    );
    expect(resourceOf(renamed.event)).toEqual(renamed.body.workspace);

    const other = await t.user();
    const added = await one(
      'member.created',
      () => t.call('POST', `${ws}/members`, { token, body: { principal_id: other.id, role: 'viewer' } }),
      201,
    );
    expect(resourceOf(added.event)).toEqual(added.body.member);
    const member = added.body.member.id as string;
    const promoted = await one('member.updated', () =>
      t.call('PATCH', `${ws}/members/${member}`, { token, body: { role: 'editor' } }),
    );
    expect(resourceOf(promoted.event)).toEqual(promoted.body.member);
    const removed = await one(
      'member.deleted',
      () => t.call('DELETE', `${ws}/members/${member}`, { token }),
      204,
    );
    expect(resourceOf(removed.event)).toEqual(promoted.body.member);

    // A service account is three rows (principal, account, membership): one event each time, not one per row.
    let account: Record<string, unknown> = {};
    const accountEvents = await eventsOf(workspace.id, async () => {
      account = ok(
        await t.call('POST', `${ws}/service-accounts`, {
          token,
          body: { name: unique('robot'), display_name: 'Robot', role: 'viewer' },
        }),
        201,
      ).service_account;
    });
    expect(accountEvents.map((event) => event.type)).toEqual(['service_account.created', 'member.created']);
    expect(resourceOf(accountEvents[0] as WorkspaceEventRecord)).toEqual(account);
    const sa = `${ws}/service-accounts/${account.id}`;
    const changedAccount = await eventsOf(workspace.id, async () => {
      account = ok(
        await t.call('PATCH', sa, {
          token,
          body: { name: unique('robot'), display_name: 'Robot 2', role: 'editor' },
        }),
      ).service_account;
    });
    expect(changedAccount.map((event) => event.type).sort()).toEqual([
      'member.updated',
      'service_account.updated',
    ]);
    expect(
      resourceOf(changedAccount.find((e) => e.type === 'service_account.updated') as WorkspaceEventRecord),
    ).toEqual(account);

    const key = await one('key.created', () => t.call('POST', `${sa}/keys`, { token, body: {} }), 201);
    const { key_file: keyFile, ...publicHalf } = key.body.key;
    expect(keyFile.private_key).toBeTruthy();
    expect(resourceOf(key.event)).toEqual(publicHalf);
    expect(JSON.stringify(key.event.data)).not.toMatch(/private|"d"/);
    // Revoking is the key's change of state (it stays listed); using it is no change at all.
    const revoked = await one(
      'key.updated',
      () => t.call('DELETE', `${sa}/keys/${key.body.key.id}`, { token }),
      204,
    );
    expect(resourceOf(revoked.event)).toMatchObject({ id: key.body.key.id, state: 'revoked' });
    expect(
      await eventsOf(workspace.id, () =>
        db.query('UPDATE keys SET last_used_at = now() WHERE id = $1', [key.body.key.id]),
      ),
    ).toEqual([]);
    // A key row removed (no request does: a revoked key stays listed) is `key.deleted`.
    const { key_file: _, ...second } = ok(await t.call('POST', `${sa}/keys`, { token, body: {} }), 201).key;
    const gone = await eventsOf(workspace.id, () => db.query('DELETE FROM keys WHERE id = $1', [second.id]));
    expect(gone.map((event) => event.type)).toEqual(['key.deleted']);
    expect(resourceOf(gone[0] as WorkspaceEventRecord)).toEqual(second);

    // A computer's life: created with its operation, then the worker's moves, each its own event.
    let computer: Record<string, unknown> = {};
    let operationId = '';
    const life = await eventsOf(workspace.id, async () => {
      const answer = ok(
        await t.call('POST', `${ws}/computers`, {
          token,
          body: { name: unique('pc'), size: 'small', image: 'debian-13' },
        }),
        202,
      );
      computer = answer.computer;
      operationId = answer.operations[0].id;
      await waitFor(token, operationId);
    });
    const types = life.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(['computer.created', 'operation.created']);
    expect(resourceOf(life[0] as WorkspaceEventRecord)).toEqual(computer);
    expect(types).toContain('operation.updated');
    expect(types.filter((type) => type === 'operation.completed')).toHaveLength(1);
    const running = life
      .filter((event) => event.type === 'computer.updated')
      .map((event) => resourceOf(event).state);
    expect(running).toEqual(['starting', 'running']);
    const completed = resourceOf(
      life.find((event) => event.type === 'operation.completed') as WorkspaceEventRecord,
    );
    expect(completed).toEqual(ok(await t.call('GET', `/v1/operations/${operationId}`, { token })).operation);
    const computerPath = `${ws}/computers/${computer.id}`;
    const labelled = await one('computer.updated', () =>
      t.call('PATCH', computerPath, { token, body: { labels: { team: 'a' } } }),
    );
    expect(resourceOf(labelled.event)).toEqual(labelled.body.computer);

    // A command's operation: never its `result`, not even in `operation.completed`.
    const command = await eventsOf(workspace.id, async () => {
      const run = ok(
        await t.call('POST', `${computerPath}/run`, { token, body: { argv: ['echo', 'hi'] } }),
        202,
      );
      const done = await waitFor(token, run.operations[0].id);
      expect(done.result.execution.stdout).toBe('hi\n');
    });
    expect(command.map((event) => event.type)).toContain('operation.completed');
    for (const event of command) expect(resourceOf(event)).not.toHaveProperty('result');
    expect(JSON.stringify(command)).not.toContain('hi\\n');

    const deletion = await eventsOf(workspace.id, async () => {
      const answer = ok(await t.call('DELETE', computerPath, { token }), 202);
      await waitFor(token, answer.operations[0].id);
    });
    const computerTypes = deletion.filter((event) => noun(event.type) === 'computer');
    expect(computerTypes.map((event) => [event.type, resourceOf(event).state])).toEqual([
      ['computer.updated', 'deleting'],
      ['computer.deleted', 'deleted'],
    ]);

    const accountGone = await eventsOf(workspace.id, async () =>
      ok(await t.call('DELETE', sa, { token }), 204),
    );
    expect(accountGone.map((event) => event.type).sort()).toEqual([
      'key.updated', // its keys are revoked with it (the revoked one is touched again)
      'member.deleted',
      'service_account.deleted',
    ]);
    expect(
      resourceOf(accountGone.find((e) => e.type === 'service_account.deleted') as WorkspaceEventRecord),
    ).toEqual(account);

    // Every type of the spec's enum was seen, and the whole log is 1..N.
    const all = await workspaceEventsAfter(db, workspace.id, 0, 10_000);
    expect(all.map((event) => event.sequence)).toEqual(all.map((_, i) => i + 1));
    expect(new Set(all.map((event) => event.type))).toEqual(
      new Set([
        'workspace.updated',
        'computer.created',
        'computer.updated',
        'computer.deleted',
        'operation.created',
        'operation.updated',
        'operation.completed',
        'member.created',
        'member.updated',
        'member.deleted',
        'service_account.created',
        'service_account.updated',
        'service_account.deleted',
        'key.created',
        'key.updated',
        'key.deleted',
      ]),
    );
    // Ids are unique and sort as the sequences do; so do the times of the commits.
    const ids = all.map((event) => event.data.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const times = all.map((event) => event.data.created_at);
    expect([...times].sort()).toEqual(times);
  });

  test('a change rolled back writes no event; a no-op write none either', async () => {
    const team = await t.team();
    const before = await lastWorkspaceEventSequence(db, team.workspace.id);
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`UPDATE workspaces SET display_name = 'x', updated_at = now() WHERE id = $1`, [
          team.workspace.id,
        ]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await db.query('UPDATE workspaces SET live_computers = live_computers WHERE id = $1', [
      team.workspace.id,
    ]);
    await db.query('UPDATE members SET role = role WHERE workspace_id = $1', [team.workspace.id]);
    expect(await lastWorkspaceEventSequence(db, team.workspace.id)).toBe(before);
    expect(await workspaceEventsAfter(db, team.workspace.id, before, 10)).toEqual([]);
    // The next change takes the next sequence: nothing was used up by the rollback.
    ok(
      await t.call('PATCH', `/v1/workspaces/${team.workspace.id}`, {
        token: team.owner.token,
        body: { display_name: 'y' },
      }),
    );
    expect(
      (await workspaceEventsAfter(db, team.workspace.id, before, 10)).map((event) => event.sequence),
    ).toEqual([before + 1]);
  });

  test('the log announces its workspace on its channel when the change commits', async () => {
    const team = await t.team();
    const heard: string[] = [];
    const unlisten = await db.listen(WORKSPACE_EVENTS_CHANNEL, (payload) => heard.push(payload));
    try {
      ok(
        await t.call('PATCH', `/v1/workspaces/${team.workspace.id}`, {
          token: team.owner.token,
          body: { display_name: 'z' },
        }),
      );
      await db.notificationBarrier();
      expect(heard).toContain(team.workspace.id);
    } finally {
      await unlisten();
    }
  });

  test('deleting a workspace deletes its log; the changes it makes elsewhere are logged there', async () => {
    const doomed = await t.team();
    const elsewhere = await t.team();
    const token = doomed.owner.token;
    const account = ok(
      await t.call('POST', `/v1/workspaces/${doomed.workspace.id}/service-accounts`, {
        token,
        body: { name: unique('robot'), role: 'viewer' },
      }),
      201,
    ).service_account;
    ok(
      await t.call('POST', `/v1/workspaces/${elsewhere.workspace.id}/members`, {
        token: elsewhere.owner.token,
        body: { principal_id: account.id, role: 'viewer' },
      }),
      201,
    );
    const there = await eventsOf(elsewhere.workspace.id, async () =>
      ok(await t.call('DELETE', `/v1/workspaces/${doomed.workspace.id}`, { token }), 204),
    );
    expect(there.map((event) => event.type)).toEqual(['member.deleted']);
    expect(resourceOf(there[0] as WorkspaceEventRecord)).toMatchObject({ principal_id: account.id });
    const { rows } = await db.query(
      `SELECT (SELECT count(*) FROM workspace_events WHERE workspace_id = $1) AS events,
              (SELECT count(*) FROM workspace_event_counters WHERE workspace_id = $1) AS counters,
              (SELECT count(*) FROM workspace_event_changes) AS pending`,
      [doomed.workspace.id],
    );
    expect(rows[0]).toEqual({ events: 0, counters: 0, pending: 0 });
  });

  test('retention: housekeeping deletes events older than SVC_EVENT_RETENTION_HOURS, and the first kept one moves', async () => {
    const team = await t.team(); // four member.created events
    const workspaceId = team.workspace.id;
    expect(await firstRetainedWorkspaceEventSequence(db, workspaceId)).toBe(1);
    await db.query(
      `UPDATE workspace_events SET created_at = now() - make_interval(hours => 169) WHERE workspace_id = $1 AND sequence <= 2`,
      [workspaceId],
    );
    await db.query(
      `UPDATE workspace_events SET created_at = now() - make_interval(hours => 167) WHERE workspace_id = $1 AND sequence = 3`,
      [workspaceId],
    );
    const report = await housekeeping(db, { eventHours: 168, outputHours: 24 });
    expect(report.events).toBeGreaterThanOrEqual(2);
    expect(await firstRetainedWorkspaceEventSequence(db, workspaceId)).toBe(3);
    expect(await lastWorkspaceEventSequence(db, workspaceId)).toBe(4);
    expect((await workspaceEventsAfter(db, workspaceId, 0, 10)).map((event) => event.sequence)).toEqual([
      3, 4,
    ]);
  });

  test('every id the log mints has the form of design §1, and ids follow one another within a millisecond', async () => {
    const { rows } = await db.query<{ id: string; next: string; after: string }>(
      `SELECT svc_new_id() AS id, svc_id_after('0000000000000000000000000zz') AS next, svc_id_after($1) AS after`,
      [newId()],
    );
    const row = rows[0] as { id: string; next: string; after: string };
    expect(isId(row.id)).toBe(true);
    // The time part is this millisecond's, as src/platform/ids.ts reads it (the database's clock and ours agree).
    expect(Math.abs((idTime(row.id) as number) - Date.now())).toBeLessThan(60_000);
    expect(row.next).toBe('00000000000000000000000010' + '0');
  });
});
