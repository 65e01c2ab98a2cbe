import { afterAll, beforeAll, expect, test } from 'vitest';
import { LABEL } from '../../src/computers/docker/labels.js';
import { POOL_LABEL } from '../../src/computers/docker/warm-pool.js';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { describeDocker } from '../support/docker.js';

// The warm pool through the API (design §4.3): with SVC_POOL set, a create takes a ready container, and
// everything a client sees is as without a pool: the same answers, states, operations and quotas.
describeDocker('handlers: computers from the warm pool', (docker) => {
  describeEngines('SVC_DRIVER=docker SVC_POOL=busybox:small=1', (engine) => {
    let t: TestApp;
    let team: Team;
    // An instance label per database: two deployments on one Engine each keep a pool of their own
    // (and each would remove the other's pooled containers, which its database does not know).
    const instance = `${docker.instance}-${engine.name}`;
    beforeAll(async () => {
      t = await openTestApp(engine, {
        env: {
          SVC_DRIVER: 'docker',
          SVC_DOCKER_SOCKET: docker.socketPath,
          SVC_DOCKER_INSTANCE: instance,
          SVC_DOCKER_SWEEP_MS: '60000',
          SVC_POOL: 'busybox:small=1',
          SVC_POOL_REFILL_MS: '100',
        },
      });
      team = await t.team();
    });
    afterAll(async () => {
      await t.close();
      const left = await docker.docker.listContainers({
        all: true,
        filters: { label: [`${LABEL.instance}=${instance}`] },
      });
      for (const container of left)
        await docker.docker
          .getContainer(container.Id)
          .remove({ force: true, v: true })
          .catch(() => {});
    });
    const ws = () => `/v1/workspaces/${team.workspace.id}`;
    const token = () => team.editor.token;

    /**
     * The pool's waiting container (named `svc-<instance>-pool-…`) once it is ready: running, and its
     * row `ready` (its exec agent is up; a create claims only a ready one).
     */
    async function ready(): Promise<string> {
      let id: string | undefined;
      await expect
        .poll(
          async () => {
            const waiting = await docker.docker.listContainers({
              all: true,
              filters: { label: [`${LABEL.instance}=${instance}`, POOL_LABEL], status: ['running'] },
            });
            const running = new Set(waiting.map((c) => c.Id));
            const { rows } = await t.db.query<{ container_id: string }>(
              `SELECT container_id FROM warm_containers WHERE instance = $1 AND state = 'ready'`,
              [instance],
            );
            id = rows.find((row) => running.has(row.container_id))?.container_id;
            return id;
          },
          { timeout: 20_000 },
        )
        .toBeTruthy();
      return id as string;
    }

    async function create(key?: string) {
      const body = { name: unique('warm'), size: 'small', image: 'busybox' };
      const created = await t.call('POST', `${ws()}/computers`, {
        token: token(),
        body,
        ...(key ? { key } : {}),
      });
      expect(created.status).toBe(202);
      const operation = (
        await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=20`, { token: token() })
      ).body.operation;
      return { created, operation };
    }

    test('a create takes the ready container: running, its commands answered, the same operation and answer as without a pool', async () => {
      const pooled = await ready();
      const { created, operation } = await create();
      expect(operation).toMatchObject({ type: 'computer.create', state: 'succeeded' });
      const id = created.body.computer.id;
      const [container, ...more] = await docker.docker.listContainers({
        all: true,
        filters: { name: [`svc-${instance}-${id}`] },
      });
      expect(more).toEqual([]);
      expect(container?.Id).toBe(pooled);
      const computer = (await t.call('GET', `${ws()}/computers/${id}`, { token: token() })).body.computer;
      expect(computer).toMatchObject({ state: 'running', size: 'small', image: 'busybox' });
      const ran = await t.call('POST', `${ws()}/computers/${id}/exec`, {
        token: token(),
        body: { argv: ['sh', '-c', 'echo hi; id -u'] },
      });
      expect(ran.body.execution).toMatchObject({ exit_code: 0, stdout: 'hi\n1000\n' });
      // The pool's containers are nobody's computers: the workspace lists only its own.
      const listed = (await t.call('GET', `${ws()}/computers`, { token: token() })).body.computers;
      expect(listed.map((c: { id: string }) => c.id)).toEqual([id]);
    });

    test('a second create never receives a used container, and a retried create (same key) takes none', async () => {
      const first = await create();
      const firstId = first.created.body.computer.id;
      const used = (
        await docker.docker.listContainers({
          all: true,
          filters: { name: [`svc-${instance}-${firstId}`] },
        })
      )[0]?.Id;
      await t.call('POST', `${ws()}/computers/${firstId}/exec`, {
        token: token(),
        body: { argv: ['sh', '-c', 'echo used > /home/mark'] },
      });
      const deleted = await t.call('DELETE', `${ws()}/computers/${firstId}`, { token: token() });
      await t.call('GET', `/v1/operations/${deleted.body.operations[0].id}?wait=20`, { token: token() });
      const pooled = await ready();
      expect(pooled).not.toBe(used);
      const key = unique('key');
      const second = await create(key);
      const again = await t.call('POST', `${ws()}/computers`, {
        token: token(),
        body: { name: second.created.body.computer.name, size: 'small', image: 'busybox' },
        key,
      });
      expect(again.body.computer.id).toBe(second.created.body.computer.id);
      const secondId = second.created.body.computer.id;
      const containers = await docker.docker.listContainers({
        all: true,
        filters: { name: [`svc-${instance}-${secondId}`] },
      });
      expect(containers.map((c) => c.Id)).toEqual([pooled]);
      const ran = await t.call('POST', `${ws()}/computers/${secondId}/exec`, {
        token: token(),
        body: { argv: ['sh', '-c', 'cat /home/mark 2>&1 || true'] },
      });
      expect(ran.body.execution.stdout).toMatch(/No such file/);
    });

    test('a computer made from a snapshot never takes a pooled container: its files come from the snapshot', async () => {
      const source = (await create()).created.body.computer.id;
      await t.call('POST', `${ws()}/computers/${source}/exec`, {
        token: token(),
        body: { argv: ['sh', '-c', 'echo kept > /home/svc/kept.txt'] },
      });
      const made = await t.call('POST', `${ws()}/snapshots`, {
        token: team.owner.token,
        body: { name: unique('snap'), computer: source },
      });
      expect(made.status).toBe(202);
      const snapped = await t.call('GET', `/v1/operations/${made.body.operations[0].id}?wait=30`, {
        token: token(),
      });
      expect(snapped.body.operation.state).toBe('succeeded');
      const pooled = await ready();
      const copy = await t.call('POST', `${ws()}/computers`, {
        token: token(),
        body: { name: unique('copy'), size: 'small', snapshot: made.body.snapshot.id },
      });
      expect(copy.status).toBe(202);
      const done = await t.call('GET', `/v1/operations/${copy.body.operations[0].id}?wait=30`, {
        token: token(),
      });
      expect(done.body.operation.state).toBe('succeeded');
      const [container] = await docker.docker.listContainers({
        all: true,
        filters: { name: [`svc-${instance}-${copy.body.computer.id}`] },
      });
      expect(container?.Id).not.toBe(pooled);
      // Made from the snapshot's image, not claimed (a snapshot of a computer that came from the pool
      // carries the pool's label on its image, as Docker keeps a commit's labels: not a claim).
      const claims = await t.db.query('SELECT 1 FROM warm_containers WHERE computer_id = $1', [
        copy.body.computer.id,
      ]);
      expect(claims.rowCount).toBe(0);
      const ran = await t.call('POST', `${ws()}/computers/${copy.body.computer.id}/exec`, {
        token: token(),
        body: { argv: ['cat', '/home/svc/kept.txt'] },
      });
      expect(ran.body.execution.stdout).toBe('kept\n');
      // The snapshot's image is not left in the Engine after the test.
      const removed = await t.call('DELETE', `${ws()}/snapshots/${made.body.snapshot.id}`, {
        token: team.owner.token,
      });
      expect(removed.status).toBe(204);
    });
  });
});
