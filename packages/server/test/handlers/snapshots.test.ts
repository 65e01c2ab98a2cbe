import { afterAll, beforeAll, expect, test } from 'vitest';
import { errorOf, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { type FilesApp, openFilesApp } from './files-support.js';

const OCTET = 'application/octet-stream';
const text = (value: string) => new TextEncoder().encode(value);

describeEngines('handlers: snapshots (simulated driver)', (engine) => {
  let f: FilesApp;
  beforeAll(async () => {
    f = await openFilesApp(engine, { SVC_QUOTA_SNAPSHOTS_PER_WORKSPACE: '3' });
  });
  afterAll(() => f.t.close());
  const ws = (id = f.team.workspace.id) => `/v1/workspaces/${id}`;
  const editor = () => f.team.editor.token;

  async function operationOf(id: string, token = editor()) {
    const answer = await f.t.call('GET', `/v1/operations/${id}?wait=10`, { token });
    expect(answer.status).toBe(200);
    return answer.body.operation;
  }
  async function snapshot(computer: string, name = unique('snap')) {
    const answer = await f.t.call('POST', `${ws()}/snapshots`, { token: editor(), body: { name, computer } });
    expect(answer.status).toBe(202);
    return answer;
  }
  const write = (computer: string, path: string, body: string) =>
    f.send('PUT', `${f.files(computer)}?path=${encodeURIComponent(path)}&parents=true`, {
      body: text(body),
      contentType: OCTET,
    });
  const read = async (computer: string, path: string) => {
    const answer = await f.send('GET', `${f.files(computer)}?path=${encodeURIComponent(path)}`);
    return { status: answer.status, text: new TextDecoder().decode(answer.bytes) };
  };

  test('create: 202 with the snapshot (creating) and a computer.snapshot operation on the computer; it becomes ready with its size; the computer stays running', async () => {
    const computer = await f.newComputer();
    expect((await write(computer, '/home/svc/project/notes.txt', 'kept')).status).toBe(200);
    const answer = await snapshot(computer);
    const [operation] = answer.body.operations;
    expect(answer.body.snapshot).toMatchObject({
      state: 'creating',
      computer_id: computer,
      image: 'ubuntu-2404',
      operation_id: operation.id,
      created_by: f.team.editor.id,
    });
    expect(operation).toMatchObject({
      type: 'computer.snapshot',
      target: { type: 'computer', id: computer },
    });
    expect(answer.headers.get('location')).toBe(`/v1/operations/${operation.id}`);
    expect((await operationOf(operation.id)).state).toBe('succeeded');
    const got = await f.t.call('GET', `${ws()}/snapshots/${answer.body.snapshot.name}`, {
      token: f.team.viewer.token,
    });
    expect(got.status).toBe(200);
    expect(got.body.snapshot).toMatchObject({ id: answer.body.snapshot.id, state: 'ready', size_bytes: 4 });
    const source = await f.t.call('GET', `${ws()}/computers/${computer}`, { token: editor() });
    expect(source.body.computer.state).toBe('running');
    expect(f.driver.holdsSnapshot(answer.body.snapshot.id)).toBe(true);
    await f.t.call('DELETE', `${ws()}/snapshots/${answer.body.snapshot.id}`, { token: editor() });
  });

  test('a computer created from a snapshot has its files as they were when it was taken; image and snapshot are exclusive', async () => {
    const computer = await f.newComputer();
    await write(computer, '/home/svc/a/deep/file.txt', 'one');
    const made = await snapshot(computer);
    await operationOf(made.body.operations[0].id);
    // Later writes to the source are not in the snapshot.
    await write(computer, '/home/svc/a/deep/file.txt', 'two');
    await write(computer, '/home/svc/later.txt', 'later');
    const created = await f.t.call('POST', `${ws()}/computers`, {
      token: editor(),
      body: { name: unique('copy'), size: 'small', snapshot: made.body.snapshot.name },
    });
    expect(created.status).toBe(202);
    expect(created.body.computer).toMatchObject({ image: 'ubuntu-2404', snapshot_id: made.body.snapshot.id });
    await f.settle(created.body.operations[0].id);
    const copy = created.body.computer.id as string;
    // Its events name the snapshot too (the event log's copy of the row, migration 017).
    const { rows } = await f.t.db.query<{ snapshot_id: string }>(
      `SELECT data->>'snapshot_id' AS snapshot_id FROM workspace_events
        WHERE type = 'computer.created' AND data->>'id' = $1`,
      [copy],
    );
    expect(rows).toEqual([{ snapshot_id: made.body.snapshot.id }]);
    expect(await read(copy, '/home/svc/a/deep/file.txt')).toEqual({ status: 200, text: 'one' });
    expect((await read(copy, '/home/svc/later.txt')).status).toBe(404);
    // The copy's tree is its own.
    await write(copy, '/home/svc/a/deep/file.txt', 'three');
    expect((await read(computer, '/home/svc/a/deep/file.txt')).text).toBe('two');

    for (const body of [
      { name: unique('x'), size: 'small' },
      { name: unique('x'), size: 'small', image: 'ubuntu-2404', snapshot: made.body.snapshot.name },
    ]) {
      const refused = await f.t.call('POST', `${ws()}/computers`, { token: editor(), body });
      expect(refused.status).toBe(400);
      expect(errorOf(refused)).toMatchObject({
        code: 'invalid_argument',
        details: { field_violations: [{}] },
      });
    }
    const unknown = await f.t.call('POST', `${ws()}/computers`, {
      token: editor(),
      body: { name: unique('x'), size: 'small', snapshot: 'no-such-snapshot' },
    });
    expect(errorOf(unknown)).toMatchObject({
      code: 'invalid_argument',
      details: { field_violations: [{ field: 'snapshot' }] },
    });
    await f.t.call('DELETE', `${ws()}/snapshots/${made.body.snapshot.id}`, { token: editor() });
  });

  test('a stopped computer can be snapshotted; a failed one is 409 invalid_state; a snapshot that failed is kept, and cannot be used', async () => {
    const computer = await f.newComputer();
    const stop = await f.t.call('POST', `${ws()}/computers/${computer}/stop`, { token: editor() });
    await f.settle(stop.body.operations[0].id);
    const made = await snapshot(computer);
    expect((await operationOf(made.body.operations[0].id)).state).toBe('succeeded');
    await f.t.call('DELETE', `${ws()}/snapshots/${made.body.snapshot.id}`, { token: editor() });

    // A computer that fails its snapshots (sim-fail=snapshot): the operation fails, the snapshot too.
    const failing = await f.t.call('POST', `${ws()}/computers`, {
      token: editor(),
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404', labels: { 'sim-fail': 'snapshot' } },
    });
    await f.settle(failing.body.operations[0].id);
    const bad = await snapshot(failing.body.computer.id);
    const ended = await operationOf(bad.body.operations[0].id);
    expect(ended).toMatchObject({ state: 'failed', error: { code: 'internal' } });
    const got = await f.t.call('GET', `${ws()}/snapshots/${bad.body.snapshot.id}`, { token: editor() });
    expect(got.body.snapshot.state).toBe('failed');
    const fromFailed = await f.t.call('POST', `${ws()}/computers`, {
      token: editor(),
      body: { name: unique('x'), size: 'small', snapshot: bad.body.snapshot.id },
    });
    expect(errorOf(fromFailed)).toMatchObject({ code: 'invalid_argument' });
    expect(
      (await f.t.call('DELETE', `${ws()}/snapshots/${bad.body.snapshot.id}`, { token: editor() })).status,
    ).toBe(204);

    const fail = await f.t.call('POST', `${ws()}/computers`, {
      token: editor(),
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404', labels: { 'sim-fail': 'start' } },
    });
    await operationOf(fail.body.operations[0].id);
    const refused = await f.t.call('POST', `${ws()}/snapshots`, {
      token: editor(),
      body: { name: unique('snap'), computer: fail.body.computer.id },
    });
    expect(refused.status).toBe(409);
    expect(errorOf(refused)).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'failed', allowed_from: ['running', 'stopped'] },
    });
  });

  test('list (newest first, state filter, paging), names unique, 409 while creating, delete removes the copy', async () => {
    const computer = await f.newComputer();
    const first = await snapshot(computer);
    const busy = await f.t.call('DELETE', `${ws()}/snapshots/${first.body.snapshot.id}`, { token: editor() });
    expect(busy.status).toBe(409);
    expect(errorOf(busy)).toMatchObject({ code: 'invalid_state', details: { current_state: 'creating' } });
    await operationOf(first.body.operations[0].id);
    const clash = await f.t.call('POST', `${ws()}/snapshots`, {
      token: editor(),
      body: { name: first.body.snapshot.name, computer },
    });
    expect(clash.status).toBe(409);
    expect(errorOf(clash).code).toBe('already_exists');
    const second = await snapshot(computer);
    await operationOf(second.body.operations[0].id);
    const page = await f.t.call('GET', `${ws()}/snapshots?limit=1`, { token: f.team.viewer.token });
    expect(page.body).toMatchObject({ has_more: true, snapshots: [{ id: second.body.snapshot.id }] });
    const next = await f.t.call('GET', `${ws()}/snapshots?limit=1&cursor=${page.body.next_cursor}`, {
      token: f.team.viewer.token,
    });
    expect(next.body.snapshots[0].id).toBe(first.body.snapshot.id);
    const failed = await f.t.call('GET', `${ws()}/snapshots?state=failed`, { token: f.team.viewer.token });
    expect(failed.body.snapshots).toEqual([]);
    for (const made of [first, second]) {
      const deleted = await f.t.call('DELETE', `${ws()}/snapshots/${made.body.snapshot.id}`, {
        token: editor(),
      });
      expect(deleted.status).toBe(204);
      expect(f.driver.holdsSnapshot(made.body.snapshot.id)).toBe(false);
      const gone = await f.t.call('GET', `${ws()}/snapshots/${made.body.snapshot.id}`, { token: editor() });
      expect(gone.status).toBe(404);
    }
  });

  test('quota: SVC_QUOTA_SNAPSHOTS_PER_WORKSPACE snapshots, whatever their state: 403 quota_exceeded', async () => {
    const team = await f.t.team();
    const ws2 = ws(team.workspace.id);
    const created = await f.t.call('POST', `${ws2}/computers`, {
      token: team.editor.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
    });
    await operationOf(created.body.operations[0].id, team.editor.token);
    const made = [];
    for (let i = 0; i < 3; i++) {
      const answer = await f.t.call('POST', `${ws2}/snapshots`, {
        token: team.editor.token,
        body: { name: unique('snap'), computer: created.body.computer.name },
      });
      expect(answer.status).toBe(202);
      made.push(answer);
    }
    const over = await f.t.call('POST', `${ws2}/snapshots`, {
      token: team.editor.token,
      body: { name: unique('snap'), computer: created.body.computer.name },
    });
    expect(over.status).toBe(403);
    expect(errorOf(over)).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'snapshots_per_workspace', limit: 3 },
    });
    for (const answer of made) await operationOf(answer.body.operations[0].id, team.editor.token);
  });

  test("roles and isolation: a viewer reads but cannot create or delete; another workspace's snapshot and computer are 404, never leaked", async () => {
    const computer = await f.newComputer();
    const made = await snapshot(computer);
    await operationOf(made.body.operations[0].id);
    const path = `${ws()}/snapshots/${made.body.snapshot.id}`;
    const viewer = f.team.viewer.token;
    expect((await f.t.call('GET', path, { token: viewer })).status).toBe(200);
    const denied = await f.t.call('POST', `${ws()}/snapshots`, {
      token: viewer,
      body: { name: unique('snap'), computer },
    });
    expect(errorOf(denied).code).toBe('permission_denied');
    expect(errorOf(await f.t.call('DELETE', path, { token: viewer })).code).toBe('permission_denied');
    expect((await f.t.call('GET', path, { token: f.team.outsider.token })).status).toBe(404);

    // Another team: our snapshot by id is 404 in its workspace, and cannot seed its computers.
    const other = await f.t.team();
    const theirs = ws(other.workspace.id);
    const foreign = await f.t.call('GET', `${theirs}/snapshots/${made.body.snapshot.id}`, {
      token: other.owner.token,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.message).not.toContain(made.body.snapshot.name);
    const seeded = await f.t.call('POST', `${theirs}/computers`, {
      token: other.owner.token,
      body: { name: unique('x'), size: 'small', snapshot: made.body.snapshot.id },
    });
    expect(errorOf(seeded)).toMatchObject({
      code: 'invalid_argument',
      details: { field_violations: [{ field: 'snapshot' }] },
    });
    const ofOurs = await f.t.call('POST', `${theirs}/snapshots`, {
      token: other.owner.token,
      body: { name: unique('snap'), computer },
    });
    expect(ofOurs.status).toBe(404);
    expect(
      (await f.t.call('GET', `${theirs}/snapshots`, { token: other.owner.token })).body.snapshots,
    ).toEqual([]);
    await f.t.call('DELETE', path, { token: editor() });
  });

  test('deleting a workspace removes its snapshots from the engine', async () => {
    const team = await f.t.team();
    const ws2 = ws(team.workspace.id);
    const created = await f.t.call('POST', `${ws2}/computers`, {
      token: team.owner.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
    });
    await operationOf(created.body.operations[0].id, team.owner.token);
    const made = await f.t.call('POST', `${ws2}/snapshots`, {
      token: team.owner.token,
      body: { name: unique('snap'), computer: created.body.computer.id },
    });
    await operationOf(made.body.operations[0].id, team.owner.token);
    const removed = await f.t.call('DELETE', `${ws2}/computers/${created.body.computer.id}`, {
      token: team.owner.token,
    });
    await operationOf(removed.body.operations[0].id, team.owner.token);
    expect(f.driver.holdsSnapshot(made.body.snapshot.id)).toBe(true);
    const deleted = await f.t.call('DELETE', ws2, { token: team.owner.token });
    expect(deleted.status).toBe(204);
    expect(f.driver.holdsSnapshot(made.body.snapshot.id)).toBe(false);
    const { rows } = await f.t.db.query('SELECT id FROM snapshots WHERE workspace_id = $1', [
      team.workspace.id,
    ]);
    expect(rows).toEqual([]);
  });
});
