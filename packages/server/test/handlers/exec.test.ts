import { afterAll, beforeAll, expect, test } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

type Send = (
  body: unknown,
  options?: { id?: string; token?: string },
) => Promise<Parameters<typeof errorOf>[0]>;

/** `exec` and `run` alike: a viewer is refused (403), a non-member and an unknown computer get 404. */
async function refusesOutsiders(send: Send, team: Team): Promise<void> {
  expect(errorOf(await send({ argv: ['true'] }, { token: team.viewer.token })).code).toBe(
    'permission_denied',
  );
  expect(errorOf(await send({ argv: ['true'] }, { token: team.outsider.token })).code).toBe('not_found');
  expect(errorOf(await send({ argv: ['true'] }, { id: unique('nope') })).code).toBe('not_found');
}

// The simulated driver's commands are SIMULATED (design §13): these tests check the handler around
// them (validation, states, permission, encoding, truncation, idempotency, the audit line).
describeEngines('handlers: exec (run a command in a computer)', (engine) => {
  let t: TestApp;
  let team: Team;
  let running: string;
  const logs: { message: string; fields: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    t = await openTestApp(engine, {
      app: { log: (message, fields) => logs.push({ message, fields: fields ?? {} }) },
    });
    team = await t.team();
    running = await computer();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.id}`;

  async function settle(operationId: string) {
    const answer = await t.call('GET', `/v1/operations/${operationId}?wait=10`, { token: team.editor.token });
    expect(answer.body.operation.state).toBe('succeeded');
  }
  async function computer(): Promise<string> {
    const created = await t.call('POST', `${ws()}/computers`, {
      token: team.editor.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    await settle(created.body.operations[0].id);
    return created.body.computer.id;
  }
  const exec = (body: unknown, options: { id?: string; token?: string; key?: string } = {}) =>
    t.call('POST', `${ws()}/computers/${options.id ?? running}/exec`, {
      token: options.token ?? team.editor.token,
      body,
      ...(options.key ? { key: options.key } : {}),
    });

  test.each([
    [['echo', 'hello', 'world'], 0, 'hello world\n', ''],
    [['true'], 0, '', ''],
    [['false'], 1, '', ''],
    [['make', 'all'], 127, '', 'make: command not found (simulated driver)\n'],
  ])('%j answers 200 with exit code %i and its output', async (argv, exitCode, stdout, stderr) => {
    const answer = await exec({ argv });
    expect(answer.status).toBe(200);
    expect(answer.body.execution).toEqual({
      exit_code: exitCode,
      encoding: 'utf-8',
      stdout,
      stderr,
      stdout_truncated: false,
      stderr_truncated: false,
      timed_out: false,
      duration_ms: expect.any(Number),
    });
  });

  test('stdin reaches the command as text or as base64 bytes; bytes that are not UTF-8 come back in base64', async () => {
    const text = await exec({ argv: ['cat'], stdin: 'héllo\n' });
    expect(text.body.execution).toMatchObject({ encoding: 'utf-8', stdout: 'héllo\n' });
    const bytes = Buffer.from([0, 1, 0xff, 0xfe, 10]).toString('base64');
    const binary = await exec({ argv: ['cat'], stdin: bytes, stdin_encoding: 'base64' });
    expect(binary.body.execution).toMatchObject({ encoding: 'base64', stdout: bytes, stderr: '' });
  });

  test('output is cut at max_output_bytes and says so', async () => {
    const answer = await exec({ argv: ['echo', 'abcdefgh'], max_output_bytes: 4 });
    expect(answer.body.execution).toMatchObject({ stdout: 'abcd', stdout_truncated: true, exit_code: 0 });
  });

  test('a command past its timeout is killed: timed_out, exit code 124', async () => {
    const answer = await exec({ argv: ['sleep', '5'], timeout_seconds: 1 });
    expect(answer.status).toBe(200);
    expect(answer.body.execution).toMatchObject({ timed_out: true, exit_code: 124 });
  });

  test('a running command holds no database transaction: other requests are answered meanwhile', async () => {
    const order: string[] = [];
    const slow = exec({ argv: ['sleep', '2'], timeout_seconds: 5 }).then((answer) => {
      order.push('exec');
      return answer;
    });
    const read = await t.call('GET', `${ws()}/computers/${running}`, { token: team.viewer.token });
    order.push('read');
    expect(read.status).toBe(200);
    expect((await slow).body.execution).toMatchObject({ exit_code: 0, timed_out: false });
    expect(order).toEqual(['read', 'exec']);
  });

  test.each([
    ['an empty argv', { argv: [] }, 'argv'],
    ['an empty program', { argv: [''] }, 'argv[0]'],
    ['a timeout above 30 s', { argv: ['true'], timeout_seconds: 31 }, 'timeout_seconds'],
    ['a timeout of 0', { argv: ['true'], timeout_seconds: 0 }, 'timeout_seconds'],
    ['stdin over 65,536 characters', { argv: ['cat'], stdin: 'x'.repeat(65_537) }, 'stdin'],
    ['stdin that is not base64', { argv: ['cat'], stdin: 'not base64!', stdin_encoding: 'base64' }, 'stdin'],
    ['max_output_bytes above the limit', { argv: ['true'], max_output_bytes: 262_145 }, 'max_output_bytes'],
    ['an unknown field', { argv: ['true'], shell: true }, 'shell'],
  ])('400 invalid_argument for %s', async (_, body, field) => {
    const answer = await exec(body);
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_argument');
    expect(error.details.field_violations.map((v: { field: string }) => v.field)).toContain(field);
  });

  test('409 invalid_state unless running; 409 operation_in_progress while an operation holds it', async () => {
    const id = await computer();
    const stop = await t.call('POST', `${ws()}/computers/${id}/stop`, { token: team.editor.token });
    const busy = await exec({ argv: ['true'] }, { id });
    expect(errorOf(busy)).toMatchObject({
      code: 'operation_in_progress',
      details: { operation_id: stop.body.operations[0].id },
    });
    await settle(stop.body.operations[0].id);
    const stopped = await exec({ argv: ['true'] }, { id });
    expect(stopped.status).toBe(409);
    expect(errorOf(stopped)).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'stopped', allowed_from: ['running'] },
    });
  });

  test('a viewer may not run commands (403); a non-member learns nothing (404)', () =>
    refusesOutsiders(exec, team));

  test('a retry with the same Idempotency-Key replays the answer without running the command again', async () => {
    const key = newId();
    const first = await exec({ argv: ['echo', 'once'] }, { key });
    const runs = logs.filter((l) => l.message === 'command run').length;
    const again = await exec({ argv: ['echo', 'once'] }, { key });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(logs.filter((l) => l.message === 'command run')).toHaveLength(runs);
  });

  test('the request log names the caller, the computer and argv[0], never stdin or output', async () => {
    const answer = await exec({ argv: ['cat', '--secret-flag'], stdin: 'hunter2' });
    const requestId = answer.headers.get('request-id');
    const line = logs.find((l) => l.message === 'command run' && l.fields.request_id === requestId);
    expect(line?.fields).toEqual({
      request_id: requestId,
      operation_id: 'execComputer',
      principal_id: team.editor.id,
      workspace_id: team.workspace.id,
      computer_id: running,
      program: 'cat',
      exit_code: 0,
      timed_out: false,
      duration_ms: expect.any(Number),
    });
    expect(JSON.stringify(line)).not.toContain('hunter2');
    expect(JSON.stringify(line)).not.toContain('--secret-flag');
  });
});

// The long form (design §13): POST …/run answers 202 with a `computer.exec` operation; the worker
// runs the command (SIMULATED by the default driver) and stores what it returned on the operation.
describeEngines('handlers: run (a long command, as an operation)', (engine) => {
  let t: TestApp;
  let team: Team;
  let running: string;
  const logs: { message: string; fields: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    t = await openTestApp(engine, {
      app: { log: (message, fields) => logs.push({ message, fields: fields ?? {} }) },
    });
    team = await t.team();
    running = await computer();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.id}`;

  const operation = async (id: string, token = team.editor.token, wait = 10) =>
    (await t.call('GET', `/v1/operations/${id}?wait=${wait}`, { token })).body.operation;
  async function computer(): Promise<string> {
    const created = await t.call('POST', `${ws()}/computers`, {
      token: team.editor.token,
      body: { name: unique('box'), size: 'small', image: 'ubuntu-2404' },
    });
    expect(created.status).toBe(202);
    expect((await operation(created.body.operations[0].id)).state).toBe('succeeded');
    return created.body.computer.id;
  }
  const run = (body: unknown, options: { id?: string; token?: string; key?: string } = {}) =>
    t.call('POST', `${ws()}/computers/${options.id ?? running}/run`, {
      token: options.token ?? team.editor.token,
      body,
      ...(options.key ? { key: options.key } : {}),
    });

  test('202 with a computer.exec operation that ends with the execution as its result; the computer stays running', async () => {
    const answer = await run({ argv: ['cat'], stdin: 'hello\n', timeout_seconds: 600 });
    expect(answer.status).toBe(202);
    const [pending] = answer.body.operations;
    expect(pending).toMatchObject({ type: 'computer.exec', target: { type: 'computer', id: running } });
    expect(pending.result).toBeUndefined();
    expect(answer.headers.get('location')).toBe(`/v1/operations/${pending.id}`);
    const done = await operation(pending.id);
    expect(done).toMatchObject({ state: 'succeeded', progress: 100 });
    expect(done.error).toBeUndefined();
    expect(done.result).toEqual({
      execution: {
        exit_code: 0,
        encoding: 'utf-8',
        stdout: 'hello\n',
        stderr: '',
        stdout_truncated: false,
        stderr_truncated: false,
        timed_out: false,
        duration_ms: expect.any(Number),
      },
    });
    const box = await t.call('GET', `${ws()}/computers/${running}`, { token: team.viewer.token });
    expect(box.body.computer.state).toBe('running');
    expect(box.body.computer.current_operation_id).toBeUndefined();
  });

  test('a failing command still succeeds as an operation (read exit_code); a killed one says timed_out', async () => {
    const failing = await run({ argv: ['false'] });
    expect((await operation(failing.body.operations[0].id)).result.execution).toMatchObject({ exit_code: 1 });
    const slow = await run({ argv: ['sleep', '5'], timeout_seconds: 1 });
    const killed = await operation(slow.body.operations[0].id);
    expect(killed.state).toBe('succeeded');
    expect(killed.result.execution).toMatchObject({ timed_out: true, exit_code: 124 });
  });

  test('stdin is kept only until the command starts', async () => {
    const answer = await run({ argv: ['cat'], stdin: 'hunter2' });
    const id = answer.body.operations[0].id;
    await operation(id);
    const { rows } = await t.db.query<{ command: unknown }>('SELECT command FROM operations WHERE id = $1', [
      id,
    ]);
    expect(rows[0]?.command).toBeNull();
  });

  test('the result is shown to callers who may run commands; a viewer sees the operation without it', async () => {
    const answer = await run({ argv: ['echo', 'private'] });
    const id = answer.body.operations[0].id;
    expect((await operation(id)).result.execution.stdout).toBe('private\n');
    const seen = await operation(id, team.viewer.token);
    expect(seen.state).toBe('succeeded');
    expect(seen.result).toBeUndefined();
    const listed = await t.call('GET', `${ws()}/operations?target_id=${running}`, {
      token: team.viewer.token,
    });
    expect(listed.body.operations.find((op: { id: string }) => op.id === id)?.result).toBeUndefined();
    const editorList = await t.call('GET', `${ws()}/operations?target_id=${running}`, {
      token: team.editor.token,
    });
    expect(editorList.body.operations.find((op: { id: string }) => op.id === id)?.result).toBeDefined();
  });

  test('the operation fails when the computer stops while the command runs', async () => {
    const id = await computer();
    const answer = await run({ argv: ['sleep', '20'], timeout_seconds: 60 }, { id });
    const opId = answer.body.operations[0].id;
    for (let i = 0; i < 100 && (await operation(opId, team.editor.token, 0)).state === 'pending'; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const stop = await t.call('POST', `${ws()}/computers/${id}/stop`, { token: team.editor.token });
    expect(stop.status).toBe(202);
    const failed = await operation(opId);
    expect(failed.state).toBe('failed');
    expect(failed.error).toMatchObject({ code: 'invalid_state', details: { allowed_from: ['running'] } });
    expect(failed.error.message).toMatch(/left running .* the command was stopped/);
    expect(failed.result).toBeUndefined();
  });

  test.each([
    ['a timeout above an hour', { argv: ['true'], timeout_seconds: 3601 }, 'timeout_seconds'],
    ['a timeout of 0', { argv: ['true'], timeout_seconds: 0 }, 'timeout_seconds'],
    ['an empty program', { argv: [''] }, 'argv[0]'],
    ['stdin that is not base64', { argv: ['cat'], stdin: 'not base64!', stdin_encoding: 'base64' }, 'stdin'],
    ['an unknown field', { argv: ['true'], async: true }, 'async'],
  ])('400 invalid_argument for %s', async (_, body, field) => {
    const answer = await run(body);
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_argument');
    expect(error.details.field_violations.map((v: { field: string }) => v.field)).toContain(field);
  });

  test('a timeout the short form refuses is accepted here', async () => {
    const short = await t.call('POST', `${ws()}/computers/${running}/exec`, {
      token: team.editor.token,
      body: { argv: ['true'], timeout_seconds: 3600 },
    });
    expect(errorOf(short).code).toBe('invalid_argument');
    const long = await run({ argv: ['true'], timeout_seconds: 3600 });
    expect(long.status).toBe(202);
    expect((await operation(long.body.operations[0].id)).state).toBe('succeeded');
  });

  test('409 invalid_state unless running; 409 operation_in_progress while an operation holds it', async () => {
    const id = await computer();
    const stop = await t.call('POST', `${ws()}/computers/${id}/stop`, { token: team.editor.token });
    expect(errorOf(await run({ argv: ['true'] }, { id }))).toMatchObject({
      code: 'operation_in_progress',
      details: { operation_id: stop.body.operations[0].id },
    });
    await operation(stop.body.operations[0].id);
    expect(errorOf(await run({ argv: ['true'] }, { id }))).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'stopped', allowed_from: ['running'] },
    });
  });

  test('a viewer may not run commands (403); a non-member learns nothing (404)', () =>
    refusesOutsiders(run, team));

  test('a retry with the same Idempotency-Key replays the 202 and starts no second command', async () => {
    const key = newId();
    const first = await run({ argv: ['echo', 'once'] }, { key });
    const again = await run({ argv: ['echo', 'once'] }, { key });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.operations[0].id).toBe(first.body.operations[0].id);
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM operations WHERE type = 'computer.exec' AND id = $1`,
      [first.body.operations[0].id],
    );
    expect(rows[0]?.n).toBe(1);
  });

  test('the request log names the caller, the computer and argv[0], never stdin or arguments', async () => {
    const answer = await run({ argv: ['cat', '--secret-flag'], stdin: 'hunter2' });
    const requestId = answer.headers.get('request-id');
    const line = logs.find((l) => l.message === 'command requested' && l.fields.request_id === requestId);
    expect(line?.fields).toEqual({
      request_id: requestId,
      operation_id: 'runComputer',
      operation: answer.body.operations[0].id,
      principal_id: team.editor.id,
      workspace_id: team.workspace.id,
      computer_id: running,
      program: 'cat',
    });
    expect(JSON.stringify(line)).not.toContain('hunter2');
    expect(JSON.stringify(line)).not.toContain('--secret-flag');
  });
});
