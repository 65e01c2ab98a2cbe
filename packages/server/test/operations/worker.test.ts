import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  type ComputerDriver,
  type DriverAction,
  type DriverComputer,
  type DriverContext,
  DriverError,
  type ExecRequest,
  type ExecResult,
} from '../../src/computers/driver.js';
import { OperationEvents, waitForOperation } from '../../src/computers/events.js';
import {
  createComputerRecord,
  requestComputerAction,
  requestComputerCommand,
  requestComputerSnapshot,
} from '../../src/computers/records.js';
import type { ComputerRow } from '../../src/computers/repositories/computers.js';
import type { OperationRow } from '../../src/computers/repositories/operations.js';
import { insertSnapshot } from '../../src/computers/repositories/snapshots.js';
import { SimulatedDriver } from '../../src/computers/simulated-driver.js';
import { ComputerStateError } from '../../src/computers/transitions.js';
import { OperationWorker } from '../../src/computers/worker.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { describeEngines, describePostgres } from '../support/databases.js';
import { createWorkspace } from '../support/fixtures.js';

const workers: OperationWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

function worker(
  db: Database,
  driver: ComputerDriver,
  options: { leaseMs?: number; workerId?: string; events?: OperationEvents } = {},
): OperationWorker {
  const created = new OperationWorker({
    db,
    driver,
    leaseMs: options.leaseMs ?? 5000,
    pollMs: 50,
    ...options,
  });
  workers.push(created);
  return created;
}

async function newComputer(
  db: Database,
  workspaceId: string,
  userId: string,
  labels: Record<string, string> = {},
) {
  return db.transaction((tx) =>
    createComputerRecord(
      tx,
      {
        workspace_id: workspaceId,
        name: `c${newId().slice(-10)}`,
        size: 'small',
        image: 'ubuntu-2404',
        labels,
      },
      userId,
    ),
  );
}

async function read(db: Database, computerId: string, operationId: string) {
  const computer = (await db.query<ComputerRow>('SELECT * FROM computers WHERE id = $1', [computerId]))
    .rows[0]!;
  const operation = (await db.query<OperationRow>('SELECT * FROM operations WHERE id = $1', [operationId]))
    .rows[0]!;
  return { computer, operation };
}

/** Lifecycle tests never run commands (`computer.exec` has tests of its own below): these drivers refuse them. */
const noExec: ComputerDriver['exec'] = () => Promise.reject(new Error('the worker does not run commands'));

/** Records every driver call, and the computer state the worker had written when it was made. */
class RecordingDriver implements ComputerDriver {
  readonly name = 'recording';
  readonly calls: { action: DriverAction; computer: string; worker: string }[] = [];
  constructor(
    private readonly inner: ComputerDriver,
    private readonly label = '',
  ) {}
  run(action: DriverAction, computer: DriverComputer, context: DriverContext) {
    this.calls.push({ action, computer: computer.id, worker: this.label });
    return this.inner.run(action, computer, context);
  }
  exec = noExec;
}

describeEngines('operations', (engine) => {
  let db: Database;
  let workspaceId: string;
  let userId: string;
  beforeAll(async () => {
    db = await engine.open();
    ({ workspaceId, userId } = await createWorkspace(db));
  });
  // Tests share one database: leftovers of one test (pending operations) must not feed the next's worker.
  beforeEach(async () => {
    await db.query(`UPDATE operations SET state = 'canceled' WHERE state IN ('pending', 'running')`);
  });

  test('create runs creating → starting → running, with progress, and wakes a waiter', async () => {
    const events = new OperationEvents();
    const seen: string[] = [];
    const driver: ComputerDriver = {
      name: 'probe',
      exec: noExec,
      async run(action, computer, context) {
        seen.push(
          `${action}:${(await db.query<{ state: string }>('SELECT state FROM computers WHERE id = $1', [computer.id])).rows[0]!.state}`,
        );
        await context.progress(100);
      },
    };
    const { computer, operation } = await newComputer(db, workspaceId, userId);
    expect([computer.state, operation.state, operation.type]).toEqual([
      'creating',
      'pending',
      'computer.create',
    ]);
    const waiting = waitForOperation(db, events, operation.id, 10_000, { pollMs: 5000 });
    await worker(db, driver, { events }).start();
    const started = Date.now();
    const done = await waiting;
    expect(Date.now() - started).toBeLessThan(4000); // woken by the event, not by the 5 s poll
    expect(seen).toEqual(['create:creating', 'start:starting']);
    expect(done).toMatchObject({ state: 'succeeded', progress: 100, error: null, attempts: 1 });
    const after = await read(db, computer.id, operation.id);
    expect(after.computer).toMatchObject({ state: 'running', current_operation_id: null });
    expect(after.computer.started_at).toBeInstanceOf(Date);
    expect(after.operation.completed_at).toBeInstanceOf(Date);
  });

  test.each([
    ['stop', 'running', 'stopping', 'stopped'],
    ['restart', 'running', 'restarting', 'running'],
    ['start', 'stopped', 'starting', 'running'],
    ['start', 'failed', 'starting', 'running'],
    ['delete', 'stopped', 'deleting', 'deleted'],
  ] as const)('%s from %s: %s while it runs, then %s', async (action, from, during, to) => {
    const { computer } = await newComputer(db, workspaceId, userId);
    await db.query(`UPDATE computers SET state = $2, current_operation_id = NULL WHERE id = $1`, [
      computer.id,
      from,
    ]);
    await db.query(`UPDATE operations SET state = 'succeeded' WHERE target_id = $1`, [computer.id]);
    const operation = await db.transaction((tx) => requestComputerAction(tx, computer.id, action, userId));
    expect((await read(db, computer.id, operation.id)).computer).toMatchObject({
      state: during,
      current_operation_id: operation.id,
    });
    await worker(db, new SimulatedDriver({ stepMs: 1 })).runOnce();
    const after = await read(db, computer.id, operation.id);
    expect([after.operation.state, after.computer.state, after.computer.current_operation_id]).toEqual([
      'succeeded',
      to,
      null,
    ]);
    if (to === 'deleted') expect(after.computer.deleted_at).toBeInstanceOf(Date);
  });

  test.each([
    ['start', 'running', 'invalid_state', { current_state: 'running', allowed_from: ['stopped', 'failed'] }],
    ['stop', 'stopped', 'invalid_state', { current_state: 'stopped', allowed_from: ['running'] }],
    ['restart', 'failed', 'invalid_state', { current_state: 'failed', allowed_from: ['running'] }],
    [
      'delete',
      'deleted',
      'invalid_state',
      { current_state: 'deleted', allowed_from: ['running', 'stopped', 'failed'] },
    ],
    ['stop', 'creating', 'operation_in_progress', 'operation_id'],
  ] as const)('%s while %s → 409 %s', async (action, state, code, details) => {
    const { computer, operation } = await newComputer(db, workspaceId, userId);
    if (state !== 'creating')
      await db.query(`UPDATE computers SET state = $2 WHERE id = $1`, [computer.id, state]);
    const error = await db
      .transaction((tx) => requestComputerAction(tx, computer.id, action, userId))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ComputerStateError);
    expect([(error as ComputerStateError).status, (error as ComputerStateError).code]).toEqual([409, code]);
    expect((error as ComputerStateError).details).toEqual(
      details === 'operation_id' ? { operation_id: operation.id } : details,
    );
  });

  test.each([
    ['create', { 'sim-fail': 'create' }],
    ['start (second phase of create)', { 'sim-fail': 'start' }],
    ['always', { 'sim-fail': 'always' }],
  ])(
    'a simulated failure in %s fails the operation with an error object and leaves the computer failed',
    async (_name, labels) => {
      const { computer, operation } = await newComputer(db, workspaceId, userId, labels);
      await worker(db, new SimulatedDriver({ stepMs: 1, steps: 2 })).runOnce();
      const after = await read(db, computer.id, operation.id);
      expect(after.operation).toMatchObject({
        state: 'failed',
        error: { code: 'internal', details: { driver: 'simulated' } },
      });
      expect(after.operation.error?.message).toMatch(/^simulated failure/);
      expect(after.operation.progress).toBeLessThan(100);
      expect([after.computer.state, after.computer.current_operation_id]).toEqual(['failed', null]);
    },
  );

  test('a driver that throws something unexpected fails the operation without leaking the message', async () => {
    const { computer, operation } = await newComputer(db, workspaceId, userId);
    await worker(db, {
      name: 'broken',
      exec: noExec,
      run: async () => Promise.reject(new Error('SELECT secret FROM x')),
    }).runOnce();
    const after = await read(db, computer.id, operation.id);
    expect(after.operation).toMatchObject({
      state: 'failed',
      error: { code: 'internal', message: 'the operation failed unexpectedly' },
    });
    expect(after.computer.state).toBe('failed');
  });

  test('waitForOperation answers as it stands when the wait runs out, and undefined for no operation', async () => {
    const { operation } = await newComputer(db, workspaceId, userId);
    const started = Date.now();
    expect(
      await waitForOperation(db, new OperationEvents(), operation.id, 200, { pollMs: 50 }),
    ).toMatchObject({ state: 'pending' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(await waitForOperation(db, new OperationEvents(), newId(), 0)).toBeUndefined();
    await db.query(`UPDATE operations SET state = 'canceled' WHERE id = $1`, [operation.id]);
  });

  test('a worker that dies mid-operation is taken over after its lease; the dead one writes nothing', async () => {
    const { computer, operation } = await newComputer(db, workspaceId, userId);
    const calls: string[] = [];
    let reached!: () => void;
    const inCreate = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const hanging: ComputerDriver = {
      name: 'hanging',
      exec: noExec,
      run: (action, _computer, context) => {
        calls.push(`a:${action}`);
        reached();
        return new Promise((_resolve, reject) =>
          context.signal.addEventListener('abort', () => reject(context.signal.reason)),
        );
      },
    };
    const a = worker(db, hanging, { leaseMs: 300, workerId: 'replica-a' });
    await a.start();
    await inCreate;
    await a.crash();
    const b = worker(db, new RecordingDriver(new SimulatedDriver({ stepMs: 1 }), 'b'), {
      leaseMs: 300,
      workerId: 'replica-b',
    });
    // Not before the lease runs out…
    expect(await b.runOnce()).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 350));
    // …then b claims it (second attempt) and finishes it.
    expect((await b.runOnce())?.id).toBe(operation.id);
    const after = await read(db, computer.id, operation.id);
    expect(after.operation).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(after.operation.claimed_by).toMatch(/^replica-b\//);
    expect(after.computer.state).toBe('running');
    expect(calls).toEqual(['a:create']);
  });

  test('a computer.snapshot whose worker dies is taken over after its lease: the snapshot ends ready, once, and the computer keeps its state', async () => {
    const { computer, operation: create } = await newComputer(db, workspaceId, userId);
    await db.query(`UPDATE operations SET state = 'succeeded' WHERE id = $1`, [create.id]);
    await db.query(`UPDATE computers SET state = 'running', current_operation_id = NULL WHERE id = $1`, [
      computer.id,
    ]);
    const snapshotId = newId();
    const operation = await db.transaction(async (tx) => {
      const requested = await requestComputerSnapshot(tx, computer.id, userId);
      await insertSnapshot(tx, {
        id: snapshotId,
        workspace_id: workspaceId,
        name: `s${newId().slice(-10)}`,
        description: null,
        computer_id: computer.id,
        image: computer.image,
        operation_id: requested.operation.id,
        created_by: userId,
      });
      return requested.operation;
    });
    let reached!: () => void;
    const inTake = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const hanging: ComputerDriver = {
      name: 'hanging',
      exec: noExec,
      run: () => Promise.reject(new Error('no lifecycle action here')),
      snapshots: {
        take: (_computer, _snapshot, context) => {
          reached();
          return new Promise((_resolve, reject) =>
            context.signal.addEventListener('abort', () => reject(context.signal.reason)),
          );
        },
        remove: async () => {},
      },
    };
    const a = worker(db, hanging, { leaseMs: 300, workerId: 'replica-a' });
    await a.start();
    await inTake;
    await a.crash();
    const simulated = new SimulatedDriver({ stepMs: 1 });
    const b = worker(db, simulated, { leaseMs: 300, workerId: 'replica-b' });
    expect(await b.runOnce()).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await b.runOnce())?.id).toBe(operation.id);
    const after = await read(db, computer.id, operation.id);
    expect(after.operation).toMatchObject({ state: 'succeeded', attempts: 2, type: 'computer.snapshot' });
    expect(after.computer).toMatchObject({ state: 'running', current_operation_id: null });
    const { rows } = await db.query<{ state: string }>('SELECT state FROM snapshots WHERE id = $1', [
      snapshotId,
    ]);
    expect(rows).toEqual([{ state: 'ready' }]);
    expect(simulated.holdsSnapshot(snapshotId)).toBe(true);
  });
  describe('computer.exec operations (design §13)', () => {
    /** A computer in `running`, and a pending `computer.exec` operation for `argv` in it. */
    async function commandIn(argv: string[], stdin?: string) {
      const { computer, operation: create } = await newComputer(db, workspaceId, userId);
      await db.query(`UPDATE operations SET state = 'succeeded' WHERE id = $1`, [create.id]);
      await db.query(`UPDATE computers SET state = 'running', current_operation_id = NULL WHERE id = $1`, [
        computer.id,
      ]);
      const operation = await db.transaction((tx) =>
        requestComputerCommand(
          tx,
          computer.id,
          {
            argv,
            ...(stdin === undefined ? {} : { stdin_base64: Buffer.from(stdin).toString('base64') }),
            timeout_ms: 60_000,
            max_output_bytes: 1024,
          },
          userId,
        ),
      );
      return { computer, operation };
    }
    const output = (text: string): ExecResult => ({
      exitCode: 3,
      stdout: new TextEncoder().encode(text),
      stderr: new Uint8Array(),
      stdoutTruncated: false,
      stderrTruncated: false,
      timedOut: false,
    });
    /** A driver whose `exec` is `exec`, and whose `run` must never be called. */
    const execOnly = (exec: ComputerDriver['exec'], runs: string[] = []): ComputerDriver => ({
      name: 'exec-only',
      exec,
      run: async (action) => {
        runs.push(action);
      },
    });
    /** An `exec` that never ends by itself: it rejects when its signal aborts. */
    const hanging =
      (started: () => void, aborted: unknown[] = []): ComputerDriver['exec'] =>
      (_computer, request) => {
        started();
        return new Promise((_resolve, reject) =>
          request.signal.addEventListener('abort', () => {
            aborted.push(request.signal.reason);
            reject(request.signal.reason);
          }),
        );
      };

    test('runs the command once through exec, stores what it returned, and leaves the computer alone', async () => {
      const { computer, operation } = await commandIn(['cat'], 'secret input');
      expect(operation).toMatchObject({ type: 'computer.exec', state: 'pending' });
      const requests: ExecRequest[] = [];
      const runs: string[] = [];
      const w = worker(
        db,
        execOnly(async (_computer, request) => {
          requests.push(request);
          return output(new TextDecoder().decode(request.stdin));
        }, runs),
      );
      expect((await w.runOnce())?.id).toBe(operation.id);
      const after = await read(db, computer.id, operation.id);
      expect(after.operation).toMatchObject({
        state: 'succeeded',
        progress: 100,
        error: null,
        command: null,
      });
      expect(after.operation.result).toEqual({
        execution: {
          exit_code: 3,
          encoding: 'utf-8',
          stdout: 'secret input',
          stderr: '',
          stdout_truncated: false,
          stderr_truncated: false,
          timed_out: false,
          duration_ms: expect.any(Number),
        },
      });
      expect(after.computer).toMatchObject({ state: 'running', current_operation_id: null });
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ argv: ['cat'], timeoutMs: 60_000, maxOutputBytes: 1024 });
      expect(runs).toEqual([]);
    });

    test('a driver failure fails the operation with its error; the computer is not marked failed', async () => {
      const { computer, operation } = await commandIn(['true']);
      const w = worker(
        db,
        execOnly(() => Promise.reject(new DriverError('internal', 'the engine refused the command'))),
      );
      await w.runOnce();
      const after = await read(db, computer.id, operation.id);
      expect(after.operation).toMatchObject({
        state: 'failed',
        result: null,
        command: null,
        error: { code: 'internal', message: 'the engine refused the command' },
      });
      expect(after.computer.state).toBe('running');
    });

    test('a computer that is no longer running when the command is to start: failed, the command never ran', async () => {
      const { computer, operation } = await commandIn(['true']);
      await db.query(`UPDATE computers SET state = 'stopped' WHERE id = $1`, [computer.id]);
      const requests: unknown[] = [];
      const w = worker(
        db,
        execOnly(async (_c, request) => {
          requests.push(request);
          return output('');
        }),
      );
      await w.runOnce();
      const after = await read(db, computer.id, operation.id);
      expect(after.operation.state).toBe('failed');
      expect(after.operation.error).toMatchObject({
        code: 'invalid_state',
        details: { current_state: 'stopped', allowed_from: ['running'] },
      });
      expect(after.operation.error?.message).toMatch(/did not run/);
      expect(requests).toEqual([]);
      expect(after.computer.state).toBe('stopped');
    });

    test('a computer that stops while the command runs: the command is aborted and the operation fails', async () => {
      const { computer, operation } = await commandIn(['sleep', '3600']);
      let started!: () => void;
      const inExec = new Promise<void>((resolve) => {
        started = resolve;
      });
      const aborted: unknown[] = [];
      const w = worker(db, execOnly(hanging(started, aborted)), { leaseMs: 300 });
      const done = w.runOnce();
      await inExec;
      await db.query(`UPDATE computers SET state = 'stopping' WHERE id = $1`, [computer.id]);
      await done;
      const after = await read(db, computer.id, operation.id);
      expect(after.operation.state).toBe('failed');
      expect(after.operation.error).toMatchObject({
        code: 'invalid_state',
        details: { current_state: 'stopping', allowed_from: ['running'] },
      });
      expect(aborted).toEqual(['stopping']);
    });

    test('commands run on slots of their own: a long command never holds up a stop', async () => {
      const { computer, operation } = await commandIn(['sleep', '3600']);
      let started!: () => void;
      const inExec = new Promise<void>((resolve) => {
        started = resolve;
      });
      const driver = execOnly(hanging(started));
      const w = new OperationWorker({
        db,
        driver,
        leaseMs: 5000,
        pollMs: 50,
        concurrency: 1,
        commandConcurrency: 1,
      });
      workers.push(w);
      await w.start();
      await inExec;
      // The one lifecycle slot is free although a command runs: the stop is claimed and finishes.
      const stop = await db.transaction((tx) => requestComputerAction(tx, computer.id, 'stop', userId));
      const stopped = await waitForOperation(db, new OperationEvents(), stop.id, 5000, { pollMs: 20 });
      expect(stopped?.state).toBe('succeeded');
      // …and the command, whose computer left running, fails.
      const failed = await waitForOperation(db, new OperationEvents(), operation.id, 5000, { pollMs: 20 });
      expect(failed).toMatchObject({ state: 'failed', error: { code: 'invalid_state' } });
    });

    test('after a takeover the command is not run again: the operation fails saying so', async () => {
      const { computer, operation } = await commandIn(['make', 'release']);
      let started!: () => void;
      const inExec = new Promise<void>((resolve) => {
        started = resolve;
      });
      const a = worker(db, execOnly(hanging(started)), { leaseMs: 300, workerId: 'replica-a' });
      await a.start();
      await inExec;
      await a.crash();
      const again: unknown[] = [];
      const b = worker(
        db,
        execOnly(async (_c, request) => {
          again.push(request);
          return output('');
        }),
        {
          leaseMs: 300,
          workerId: 'replica-b',
        },
      );
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect((await b.runOnce())?.id).toBe(operation.id);
      const after = await read(db, computer.id, operation.id);
      expect(after.operation).toMatchObject({ state: 'failed', attempts: 2, command: null, result: null });
      expect(after.operation.error).toMatchObject({ code: 'unavailable' });
      expect(after.operation.error?.message).toMatch(/never run twice/);
      expect(again).toEqual([]);
      expect(after.computer.state).toBe('running');
    });
  });
});

describePostgres('operations across replicas', (engine) => {
  test('two workers on one database run 30 operations, each exactly once', async () => {
    const a = await engine.open({ poolSize: 5 });
    const b = await engine.replica(a, { poolSize: 5 });
    const { workspaceId, userId } = await createWorkspace(a);
    const inner = new SimulatedDriver({ stepMs: 5, steps: 2 });
    const driverA = new RecordingDriver(inner, 'a');
    const driverB = new RecordingDriver(inner, 'b');
    const created = await Promise.all(Array.from({ length: 30 }, () => newComputer(a, workspaceId, userId)));
    await Promise.all([
      worker(a, driverA, { workerId: 'a' }).start(),
      worker(b, driverB, { workerId: 'b' }).start(),
    ]);
    await expect
      .poll(
        async () =>
          (
            await a.query(`SELECT 1 FROM operations WHERE state = 'succeeded' AND workspace_id = $1`, [
              workspaceId,
            ])
          ).rowCount,
        {
          timeout: 15_000,
          interval: 100,
        },
      )
      .toBe(30);
    const calls = [...driverA.calls, ...driverB.calls];
    // Each computer: one create and one start call, in total, across both replicas.
    for (const { computer } of created) {
      expect(
        calls
          .filter((call) => call.computer === computer.id)
          .map((call) => call.action)
          .sort(),
      ).toEqual(['create', 'start']);
    }
    const { rows } = await a.query<{ attempts: number }>(
      'SELECT attempts FROM operations WHERE workspace_id = $1',
      [workspaceId],
    );
    expect(rows.every((row) => row.attempts === 1)).toBe(true);
  });

  test('a waiter on one replica is woken by NOTIFY when another replica finishes', async () => {
    const a = await engine.open();
    const b = await engine.replica(a);
    const { workspaceId, userId } = await createWorkspace(a);
    const events = new OperationEvents();
    await events.bridge(a);
    const { operation } = await newComputer(a, workspaceId, userId);
    const waiting = waitForOperation(a, events, operation.id, 10_000, { pollMs: 8000 });
    await worker(b, new SimulatedDriver({ stepMs: 1 })).start();
    const started = Date.now();
    expect(await waiting).toMatchObject({ state: 'succeeded' });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
