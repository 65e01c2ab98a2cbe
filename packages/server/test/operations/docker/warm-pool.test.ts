import type Docker from 'dockerode';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { databaseCatalog } from '../../../src/computers/docker/catalog.js';
import { DockerDriver } from '../../../src/computers/docker/docker-driver.js';
import { containerName, LABEL } from '../../../src/computers/docker/labels.js';
import { DockerReconciler } from '../../../src/computers/docker/reconciler.js';
import { POOL_LABEL } from '../../../src/computers/docker/warm-pool.js';
import type { DriverContext } from '../../../src/computers/driver.js';
import { createComputerRecord, requestComputerAction } from '../../../src/computers/records.js';
import type { ComputerRow } from '../../../src/computers/repositories/computers.js';
import { claimPoolContainer } from '../../../src/computers/repositories/warm-pool.js';
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

const context = (): DriverContext => ({ signal: new AbortController().signal, progress: async () => {} });

describeDocker('the warm pool', (engine) => {
  describeEngines('pool', (databases) => {
    let db: Database;
    let workspaceId: string;
    let userId: string;
    beforeAll(async () => {
      db = await databases.open();
      ({ workspaceId, userId } = await createWorkspace(db));
    });

    // Each test has an instance label of its own, so one test's pool never serves another's creates.
    const instances: string[] = [];
    const instanceOf = (tag: string) => {
      const instance = `${engine.instance}-${tag}-${newId().slice(-6).toLowerCase()}`;
      instances.push(instance);
      return instance;
    };
    afterAll(async () => {
      for (const instance of instances) {
        const left = await engine.docker.listContainers({
          all: true,
          filters: { label: [`${LABEL.instance}=${instance}`] },
        });
        for (const container of left)
          await engine.docker
            .getContainer(container.Id)
            .remove({ force: true, v: true })
            .catch(() => {});
      }
    });

    /**
     * A driver of `instance` with a pool of `count` busybox/small containers (not started); with
     * `maxMemoryMib`, one whose pool grows with demand within it.
     */
    function driverWithPool(count: number, instance: string, maxMemoryMib?: number) {
      const driver = new DockerDriver({
        docker: engine.docker,
        catalog: databaseCatalog(db),
        instance,
        hostCpus: 1,
        stopSeconds: 1,
        pool: {
          db,
          targets: count > 0 ? [{ image: 'busybox', size: 'small', count }] : [],
          maxContainers: 8,
          ...(maxMemoryMib === undefined ? {} : { maxMemoryMib }),
          refillMs: 60_000,
        },
      });
      stoppers.push(async () => driver.pool?.stop());
      return driver;
    }

    /** The pool's waiting containers (named `svc-<instance>-pool-…`), by the Engine. */
    const waiting = async (instance: string): Promise<Docker.ContainerInfo[]> =>
      (
        await engine.docker.listContainers({
          all: true,
          filters: { label: [`${LABEL.instance}=${instance}`, POOL_LABEL] },
        })
      ).filter((c) => c.Names[0]?.startsWith(`/svc-${instance}-pool-`));

    async function fill(driver: DockerDriver) {
      driver.pool?.kick();
      await driver.pool?.settled();
    }

    async function record() {
      return db.transaction((tx) =>
        createComputerRecord(
          tx,
          {
            workspace_id: workspaceId,
            name: `p${newId().slice(-10)}`,
            size: 'small',
            image: 'busybox',
            labels: {},
          },
          userId,
        ),
      );
    }

    const computer = async (id: string) =>
      (await db.query<ComputerRow>('SELECT * FROM computers WHERE id = $1', [id])).rows[0]!;

    function worker(driver: DockerDriver) {
      const created = new OperationWorker({ db, driver, leaseMs: 5000, pollMs: 50 });
      stoppers.push(() => created.stop());
      return created;
    }

    test('fills to its target with running containers that belong to no computer and no workspace', async () => {
      const instance = instanceOf('fill');
      const driver = driverWithPool(2, instance);
      await fill(driver);
      const ready = await waiting(instance);
      expect(ready.map((c) => c.State)).toEqual(['running', 'running']);
      for (const container of ready) {
        expect(container.Labels[LABEL.computer]).toBeUndefined();
        expect(container.Labels[LABEL.workspace]).toBeUndefined();
        expect(container.Labels[POOL_LABEL]).toBe('busybox:small');
        const info = await engine.docker.getContainer(container.Id).inspect();
        // Made exactly as a computer's container is.
        expect(info.HostConfig).toMatchObject({
          NetworkMode: 'none',
          CapDrop: ['ALL'],
          ReadonlyRootfs: true,
          Memory: (await databaseCatalog(db).size('small'))!.memory_mib * 1024 * 1024,
        });
      }
      await fill(driver); // full: nothing more
      expect((await waiting(instance)).map((c) => c.Id).sort()).toEqual(ready.map((c) => c.Id).sort());
    });

    test('a create claims a ready container: it runs at once under the computer name, and the pool refills with new ones', async () => {
      const instance = instanceOf('claim');
      const driver = driverWithPool(1, instance);
      await fill(driver);
      const [pooled] = await waiting(instance);
      const box = {
        id: newId(),
        workspace_id: workspaceId,
        name: 'p1',
        size: 'small',
        image: 'busybox',
        labels: {},
      };
      await driver.run('create', box, context());
      const info = await driver.inspect(box);
      expect(info?.Id).toBe(pooled!.Id);
      expect(info?.State.Running).toBe(true);
      const echo = await driver.exec(box, {
        argv: ['echo', 'hi'],
        timeoutMs: 5000,
        maxOutputBytes: 100,
        signal: new AbortController().signal,
      });
      expect(Buffer.from(echo.stdout).toString()).toBe('hi\n');
      expect(info?.Name).toBe(`/${containerName(instance, box.id)}`);
      await driver.run('create', box, context()); // again (a takeover): the same container
      expect((await driver.inspect(box))?.Id).toBe(pooled!.Id);
      await driver.pool?.settled();
      const [refilled, ...more] = await waiting(instance);
      expect(more).toEqual([]);
      expect(refilled?.Id).not.toBe(pooled!.Id);
      // Deleted: the container and its claim go; the container never comes back to the pool.
      await driver.run('delete', box, context());
      await expect(engine.docker.getContainer(pooled!.Id).inspect()).rejects.toMatchObject({
        statusCode: 404,
      });
      expect(
        (await db.query('SELECT 1 FROM warm_containers WHERE computer_id = $1', [box.id])).rowCount,
      ).toBe(0);
      await fill(driver);
      expect((await waiting(instance)).map((c) => c.Id)).toEqual([refilled!.Id]);
    });

    test('a burst of claims grows the pool within SVC_POOL_MAX_MEMORY_MIB, each container made with its exec agent', async () => {
      const instance = instanceOf('demand');
      // A pool of 1 that may grow to three small containers (4 GiB each).
      const driver = driverWithPool(1, instance, 3 * 4096);
      await fill(driver);
      expect(await waiting(instance)).toHaveLength(1);
      const boxes = Array.from({ length: 10 }, (_, i) => ({
        id: newId(),
        workspace_id: workspaceId,
        name: `burst${i}`,
        size: 'small',
        image: 'busybox',
        labels: {},
      }));
      // Ten creates back to back ask the pool within a second: the claims expected while one
      // container is made are kept ready from then on, up to the memory bound.
      for (const box of boxes) await driver.pool?.claim(box);
      await driver.pool?.settled();
      const ready = await waiting(instance);
      expect(ready).toHaveLength(3);
      for (const container of ready) {
        // The exec agent runs in it already: the claiming computer's first command skips an Engine exec.
        const info = await engine.docker.getContainer(container.Id).inspect();
        expect(info.ExecIDs?.length ?? 0).toBeGreaterThanOrEqual(1);
      }
      for (const box of boxes) await driver.run('delete', box, context());
    });

    test('a claim made again by the same computer (a create run again before its rename) answers the same container', async () => {
      const instance = instanceOf('again');
      const driver = driverWithPool(2, instance);
      await fill(driver);
      const kind = { instance, image: 'busybox', size: 'small' };
      const id = newId();
      const first = await claimPoolContainer(db, kind, id);
      const again = await claimPoolContainer(db, kind, id);
      expect(first?.container_id).toBeTruthy();
      expect(again).toEqual(first);
      const other = await claimPoolContainer(db, kind, newId());
      expect(other?.container_id).not.toBe(first?.container_id);
      expect(await claimPoolContainer(db, kind, newId())).toBeUndefined(); // two ready, two claimed
    });

    test('creates at once never share a container: a pool of 2, six creates, six containers, two of them pooled', async () => {
      const instance = instanceOf('race');
      const driver = driverWithPool(2, instance);
      await fill(driver);
      const pooled = new Set((await waiting(instance)).map((c) => c.Id));
      expect(pooled.size).toBe(2);
      // Two drivers (as two replicas) claiming from one database at once.
      const other = driverWithPool(2, instance);
      const boxes = Array.from({ length: 6 }, (_, i) => ({
        id: newId(),
        workspace_id: workspaceId,
        name: `race${i}`,
        size: 'small',
        image: 'busybox',
        labels: {},
      }));
      await Promise.all(boxes.map((box, i) => (i % 2 ? other : driver).run('create', box, context())));
      const ids = await Promise.all(boxes.map(async (box) => (await driver.inspect(box))?.Id));
      expect(new Set(ids).size).toBe(6);
      expect(ids.filter((id) => id && pooled.has(id))).toHaveLength(2);
      await Promise.all(boxes.map((box) => driver.run('delete', box, context())));
    });

    test('a restarted replica adopts the ready containers, settles a half-made one and removes strays', async () => {
      const instance = instanceOf('adopt');
      const first = driverWithPool(2, instance);
      await fill(first);
      const before = (await waiting(instance)).map((c) => c.Id).sort();
      await first.pool?.stop();
      // What a replica that died leaves: a container made but its row still `creating` (a minute old),
      // and a pooled container that has no row at all.
      const halfName = `svc-${instance}-pool-half`;
      const half = await engine.docker.createContainer({
        name: halfName,
        Image: 'svc/busybox:1',
        Cmd: ['sleep', '3600'],
        Labels: { [LABEL.managed]: 'true', [LABEL.instance]: instance, [POOL_LABEL]: 'busybox:small' },
        HostConfig: { NetworkMode: 'none' },
      });
      await half.start();
      await db.query(
        `INSERT INTO warm_containers (name, instance, image, size, state, updated_at)
         VALUES ($1, $2, 'busybox', 'small', 'creating', now() - interval '2 minutes')`,
        [halfName, instance],
      );
      const stray = await engine.docker.createContainer({
        name: `svc-${instance}-pool-stray`,
        Image: 'svc/busybox:1',
        Labels: { [LABEL.managed]: 'true', [LABEL.instance]: instance, [POOL_LABEL]: 'busybox:small' },
        HostConfig: { NetworkMode: 'none' },
      });
      const second = driverWithPool(2, instance);
      await fill(second);
      // The two it had and the adopted one: three ready, over the target of 2 only by what it adopted.
      const after = (await waiting(instance)).map((c) => c.Id).sort();
      expect(after).toEqual([...before, half.id].sort());
      await expect(stray.inspect()).rejects.toMatchObject({ statusCode: 404 });
      const rows = await db.query<{ state: string }>(
        'SELECT state FROM warm_containers WHERE instance = $1',
        [instance],
      );
      expect(rows.rows.map((r) => r.state)).toEqual(['ready', 'ready', 'ready']);
      // A ready container removed behind its back is dropped from the pool and replaced.
      await engine.docker.getContainer(before[0]!).remove({ force: true });
      await db.query(`DELETE FROM warm_containers WHERE name = $1`, [halfName]);
      await engine.docker.getContainer(half.id).remove({ force: true });
      await fill(second);
      const replaced = (await waiting(instance)).map((c) => c.Id);
      expect(replaced).toHaveLength(2);
      expect(replaced).toContain(before[1]);
      expect(replaced).not.toContain(before[0]);
    });

    test('through the worker: create → running from the pool; the reconciler follows the claimed container', async () => {
      const instance = instanceOf('worker');
      const driver = driverWithPool(1, instance);
      await fill(driver);
      const [pooled] = await waiting(instance);
      const created = await record();
      await worker(driver).runOnce();
      expect(await computer(created.computer.id)).toMatchObject({ state: 'running' });
      expect((await driver.inspect({ ...created.computer, labels: {} }))?.Id).toBe(pooled!.Id);
      const reconciler = new DockerReconciler({
        docker: engine.docker,
        db,
        instance,
        sweepMs: 60_000,
        events: false,
        owns: (info, id) => driver.pool!.owns(info, id),
      });
      stoppers.push(() => reconciler.stop());
      expect(await reconciler.sweep()).toBe(0); // the claimed container counts as the computer's
      await engine.docker.getContainer(pooled!.Id).kill();
      expect(await reconciler.sweep()).toBe(1);
      expect(await computer(created.computer.id)).toMatchObject({ state: 'stopped' });
      expect(await reconciler.reconcile(created.computer.id)).toBe(false);
      const removal = await db.transaction((tx) =>
        requestComputerAction(tx, created.computer.id, 'delete', userId),
      );
      await worker(driver).runOnce();
      expect(
        (await db.query<{ state: string }>('SELECT state FROM operations WHERE id = $1', [removal.id]))
          .rows[0],
      ).toMatchObject({ state: 'succeeded' });
      await expect(engine.docker.getContainer(pooled!.Id).inspect()).rejects.toMatchObject({
        statusCode: 404,
      });
    });
  });
});
