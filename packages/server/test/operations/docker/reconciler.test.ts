import { afterEach, beforeAll, expect, test } from 'vitest';
import { databaseCatalog } from '../../../src/computers/docker/catalog.js';
import { DockerDriver } from '../../../src/computers/docker/docker-driver.js';
import { DockerReconciler } from '../../../src/computers/docker/reconciler.js';
import type { ComputerDriver } from '../../../src/computers/driver.js';
import { createComputerRecord, requestComputerAction } from '../../../src/computers/records.js';
import type { ComputerRow } from '../../../src/computers/repositories/computers.js';
import type { OperationRow } from '../../../src/computers/repositories/operations.js';
import { OperationWorker } from '../../../src/computers/worker.js';
import type { Database } from '../../../src/platform/db/database.js';
import { newId } from '../../../src/platform/ids.js';
import { describeEngines } from '../../support/databases.js';
import { describeDocker } from '../../support/docker.js';
import { createWorkspace } from '../../support/fixtures.js';

const stoppers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stoppers.splice(0)) await stop();
});

describeDocker('docker driver with the worker and the reconciler', (engine) => {
  describeEngines('operations', (databases) => {
    let db: Database;
    let driver: DockerDriver;
    let workspaceId: string;
    let userId: string;
    beforeAll(async () => {
      db = await databases.open();
      ({ workspaceId, userId } = await createWorkspace(db));
      const cpus = (await engine.docker.info()).NCPU;
      driver = new DockerDriver({
        docker: engine.docker,
        catalog: databaseCatalog(db),
        instance: engine.instance,
        hostCpus: cpus,
        stopSeconds: 1,
      });
    });

    function worker(options: { driver?: ComputerDriver; leaseMs?: number; workerId?: string } = {}) {
      const created = new OperationWorker({
        db,
        driver: options.driver ?? driver,
        leaseMs: options.leaseMs ?? 5000,
        pollMs: 50,
        ...(options.workerId ? { workerId: options.workerId } : {}),
      });
      stoppers.push(() => created.stop());
      return created;
    }

    function reconciler(events = true) {
      const created = new DockerReconciler({
        docker: engine.docker,
        db,
        instance: engine.instance,
        sweepMs: 60_000,
        events,
      });
      stoppers.push(() => created.stop());
      return created;
    }

    const computer = async (id: string) =>
      (await db.query<ComputerRow>('SELECT * FROM computers WHERE id = $1', [id])).rows[0]!;
    const operation = async (id: string) =>
      (await db.query<OperationRow>('SELECT * FROM operations WHERE id = $1', [id])).rows[0]!;

    async function create(image = 'busybox') {
      return db.transaction((tx) =>
        createComputerRecord(
          tx,
          { workspace_id: workspaceId, name: `d${newId().slice(-10)}`, size: 'small', image, labels: {} },
          userId,
        ),
      );
    }

    async function act(id: string, action: 'start' | 'stop' | 'restart' | 'delete') {
      const requested = await db.transaction((tx) => requestComputerAction(tx, id, action, userId));
      await worker().runOnce();
      return operation(requested.id);
    }

    test('the lifecycle runs real containers: create, stop, start, restart, delete', async () => {
      const created = await create();
      await worker().runOnce();
      expect(await operation(created.operation.id)).toMatchObject({ state: 'succeeded', progress: 100 });
      expect(await computer(created.computer.id)).toMatchObject({ state: 'running' });
      expect((await engine.containers(created.computer.id)).map((c) => c.State)).toEqual(['running']);
      expect(await act(created.computer.id, 'stop')).toMatchObject({ state: 'succeeded' });
      expect((await engine.containers(created.computer.id)).map((c) => c.State)).toEqual(['exited']);
      expect(await computer(created.computer.id)).toMatchObject({ state: 'stopped' });
      expect(await act(created.computer.id, 'start')).toMatchObject({ state: 'succeeded' });
      expect(await act(created.computer.id, 'restart')).toMatchObject({ state: 'succeeded' });
      expect((await engine.containers(created.computer.id)).map((c) => c.State)).toEqual(['running']);
      expect(await act(created.computer.id, 'delete')).toMatchObject({ state: 'succeeded' });
      expect(await computer(created.computer.id)).toMatchObject({ state: 'deleted' });
      expect(await engine.containers(created.computer.id)).toEqual([]);
    });

    test('a container killed or removed behind the service: stopped, then failed (events); start recovers', async () => {
      const created = await create();
      await worker().runOnce();
      reconciler().start();
      const [container] = await engine.containers(created.computer.id);
      await engine.docker.getContainer(container!.Id).kill();
      await expect
        .poll(async () => (await computer(created.computer.id)).state, { timeout: 10_000 })
        .toBe('stopped');
      expect((await computer(created.computer.id)).stopped_at).toBeInstanceOf(Date);
      await engine.docker.getContainer(container!.Id).remove({ force: true, v: true });
      await expect
        .poll(async () => (await computer(created.computer.id)).state, { timeout: 10_000 })
        .toBe('failed');
      // failed is a resting state: start makes the computer a new container.
      expect(await act(created.computer.id, 'start')).toMatchObject({ state: 'succeeded' });
      expect(await computer(created.computer.id)).toMatchObject({ state: 'running' });
      const [again] = await engine.containers(created.computer.id);
      expect(again?.Id).not.toBe(container!.Id);
      expect(await act(created.computer.id, 'delete')).toMatchObject({ state: 'succeeded' });
    });

    test('the sweep alone (no event stream) finds what changed; a computer with an operation in progress is left alone', async () => {
      const sweeper = reconciler(false);
      const killed = await create();
      const busy = await create();
      await worker().runOnce();
      await worker().runOnce();
      for (const id of [killed.computer.id, busy.computer.id]) {
        const [container] = await engine.containers(id);
        await engine.docker.getContainer(container!.Id).kill();
      }
      // busy: a stop was asked for and is not run yet, so the computer is `stopping` with an operation.
      const stop = await db.transaction((tx) => requestComputerAction(tx, busy.computer.id, 'stop', userId));
      expect(await sweeper.sweep()).toBe(1);
      expect(await computer(killed.computer.id)).toMatchObject({ state: 'stopped' });
      expect(await computer(busy.computer.id)).toMatchObject({
        state: 'stopping',
        current_operation_id: stop.id,
      });
      expect(await sweeper.sweep()).toBe(0);
      await worker().runOnce();
      expect(await computer(busy.computer.id)).toMatchObject({ state: 'stopped' });
    });

    test('an image not on this host fails the operation with unavailable and leaves the computer failed', async () => {
      const created = await create('ubuntu-2404'); // svc/ubuntu:24.04: `pnpm images:build` cannot build it here
      await worker().runOnce();
      const failed = await operation(created.operation.id);
      expect(failed).toMatchObject({
        state: 'failed',
        error: { code: 'unavailable', details: { driver: 'docker', image: 'ubuntu-2404' } },
      });
      expect(failed.error?.message).toBe(
        'the image "ubuntu-2404" is not available on this host yet; delete this computer to free its name (GET /images lists the images that run)',
      );
      expect(await computer(created.computer.id)).toMatchObject({
        state: 'failed',
        current_operation_id: null,
      });
      expect(await engine.containers(created.computer.id)).toEqual([]);
    });

    test('a replica that dies mid-create after making the container: the next one finishes, one container', async () => {
      const created = await create();
      let reached!: () => void;
      const madeIt = new Promise<void>((resolve) => {
        reached = resolve;
      });
      // Creates the container for real, then "dies" before the worker records it.
      const dying: ComputerDriver = {
        name: 'dying',
        exec: (computer, request) => driver.exec(computer, request),
        run: async (action, target, context) => {
          await driver.run(action, target, context);
          reached();
          await new Promise((_resolve, reject) =>
            context.signal.addEventListener('abort', () => reject(context.signal.reason)),
          );
        },
      };
      const a = worker({ driver: dying, leaseMs: 300, workerId: 'replica-a' });
      await a.start();
      await madeIt;
      await a.crash();
      expect(await computer(created.computer.id)).toMatchObject({ state: 'creating' });
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect((await worker({ leaseMs: 300, workerId: 'replica-b' }).runOnce())?.id).toBe(
        created.operation.id,
      );
      expect(await operation(created.operation.id)).toMatchObject({ state: 'succeeded', attempts: 2 });
      expect(await computer(created.computer.id)).toMatchObject({ state: 'running' });
      expect((await engine.containers(created.computer.id)).map((c) => c.State)).toEqual(['running']);
      expect(await act(created.computer.id, 'delete')).toMatchObject({ state: 'succeeded' });
    });
  });
});
