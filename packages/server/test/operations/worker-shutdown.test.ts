// The worker's part of a graceful shutdown (src/http/readiness.ts): stop claiming, let what is in hand
// finish, and at the deadline hand it back so another replica takes it over at once, not after the lease.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ComputerDriver } from '../../src/computers/driver.js';
import { createComputerRecord } from '../../src/computers/records.js';
import type { OperationRow } from '../../src/computers/repositories/operations.js';
import { SimulatedDriver } from '../../src/computers/simulated-driver.js';
import { OperationWorker } from '../../src/computers/worker.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { describeEngines } from '../support/databases.js';
import { createWorkspace } from '../support/fixtures.js';

describeEngines('worker shutdown', (engine) => {
  let db: Database;
  let workspaceId: string;
  let userId: string;
  const workers: OperationWorker[] = [];
  beforeAll(async () => {
    db = await engine.open();
    ({ workspaceId, userId } = await createWorkspace(db));
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
  });

  const newOperation = () =>
    db.transaction((tx) =>
      createComputerRecord(
        tx,
        {
          workspace_id: workspaceId,
          name: `c${newId().slice(-10)}`,
          size: 'small',
          image: 'ubuntu-2404',
          labels: {},
        },
        userId,
      ),
    );
  const operationRow = async (id: string) =>
    (await db.query<OperationRow>('SELECT * FROM operations WHERE id = $1', [id])).rows[0];

  /** A driver whose actions end only when `release` is called (or the run is aborted). */
  const gated = () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inAction = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const driver: ComputerDriver = {
      name: 'gated',
      exec: () => Promise.reject(new Error('the worker does not run commands')),
      run: (_action, _computer, ctx) => {
        entered();
        return new Promise((resolve, reject) => {
          gate.then(() => resolve());
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        });
      },
    };
    return { driver, release, inAction };
  };

  test('stop waits for the operation in hand to finish, within the time given', async () => {
    const { operation } = await newOperation();
    const { driver, release, inAction } = gated();
    const worker = new OperationWorker({ db, driver, leaseMs: 60_000, pollMs: 20 });
    workers.push(worker);
    await worker.start();
    await inAction;
    expect(worker.inFlight).toBe(1);
    const stopped = worker.stop({ timeoutMs: 10_000 });
    setTimeout(release, 100);
    await stopped;
    expect(worker.inFlight).toBe(0);
    expect(await operationRow(operation.id)).toMatchObject({ state: 'succeeded', attempts: 1 });
  });

  test('at the deadline the operation is handed back: another replica takes it over at once', async () => {
    const { operation } = await newOperation();
    const { driver, inAction } = gated();
    // A lease of a minute: without the hand-back, nobody could take the operation over for a minute.
    const leaving = new OperationWorker({ db, driver, leaseMs: 60_000, pollMs: 20, workerId: 'leaving' });
    workers.push(leaving);
    await leaving.start();
    await inAction;
    await leaving.stop({ timeoutMs: 100 });
    const handedBack = await operationRow(operation.id);
    expect(handedBack).toMatchObject({ state: 'running', attempts: 1 });
    expect(handedBack?.lease_until?.getTime()).toBeLessThanOrEqual(Date.now());
    const staying = new OperationWorker({
      db,
      driver: new SimulatedDriver({ stepMs: 1 }),
      leaseMs: 60_000,
      workerId: 'staying',
    });
    workers.push(staying);
    expect((await staying.runOnce())?.id).toBe(operation.id);
    const after = await operationRow(operation.id);
    expect(after).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(after?.claimed_by).toMatch(/^staying\//);
  });
});
