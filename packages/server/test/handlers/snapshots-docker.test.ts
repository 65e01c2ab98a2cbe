import { afterAll, beforeAll, expect, test } from 'vitest';
import { snapshotReference } from '../../src/computers/docker/snapshots.js';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { describeDocker } from '../support/docker.js';

// Snapshots through the API with SVC_DRIVER=docker (design §4.2): a real `docker commit` with the
// computer's /home copied in, a computer created from the image, and the image gone with the snapshot
// and with its workspace, checked on the Engine.
describeDocker('handlers: snapshots with the Docker driver', (docker) => {
  describeEngines(
    'SVC_DRIVER=docker',
    (engine) => {
      let t: TestApp;
      let team: Team;
      beforeAll(async () => {
        t = await openTestApp(engine, {
          env: {
            SVC_DRIVER: 'docker',
            SVC_DOCKER_SOCKET: docker.socketPath,
            SVC_DOCKER_INSTANCE: docker.instance,
            SVC_DOCKER_SWEEP_MS: '60000',
          },
        });
        team = await t.team();
      });
      afterAll(() => t.close());
      const ws = () => `/v1/workspaces/${team.workspace.id}`;
      const token = () => team.owner.token;
      async function settle(answer: { status: number; body: { operations: { id: string }[] } }) {
        expect(answer.status).toBe(202);
        const id = answer.body.operations[0]!.id;
        return (await t.call('GET', `/v1/operations/${id}?wait=30`, { token: token() })).body.operation;
      }
      const exec = async (computer: string, script: string) =>
        (
          await t.call('POST', `${ws()}/computers/${computer}/exec`, {
            token: token(),
            body: { argv: ['sh', '-c', script] },
          })
        ).body.execution;
      const imageGone = (snapshot: { id: string; workspace_id: string }) =>
        docker.docker
          .getImage(snapshotReference(snapshot))
          .inspect()
          .then(
            () => false,
            (error: { statusCode?: number }) => error.statusCode === 404,
          );

      test('a snapshot made, a computer created from it with the files intact; deleting the snapshot removes its image', async () => {
        const created = await t.call('POST', `${ws()}/computers`, {
          token: token(),
          body: { name: unique('src'), size: 'small', image: 'busybox' },
        });
        expect((await settle(created)).state).toBe('succeeded');
        const source = created.body.computer.id as string;
        const wrote = await exec(
          source,
          'mkdir -p /home/svc/proj && echo hello > /home/svc/proj/a.txt && chmod 600 /home/svc/proj/a.txt; echo x > /etc/elsewhere',
        );
        // The root is read-only: /home is the only place a computer's files can be (design §4.2).
        expect(wrote.stderr).toContain('Read-only file system');
        const made = await t.call('POST', `${ws()}/snapshots`, {
          token: token(),
          body: { name: unique('snap'), computer: source, description: 'with a.txt' },
        });
        expect((await settle(made)).state).toBe('succeeded');
        const snapshot = (
          await t.call('GET', `${ws()}/snapshots/${made.body.snapshot.id}`, { token: token() })
        ).body.snapshot;
        expect(snapshot).toMatchObject({ state: 'ready', image: 'busybox', size_bytes: expect.any(Number) });
        expect(await imageGone(snapshot)).toBe(false);

        const copy = await t.call('POST', `${ws()}/computers`, {
          token: token(),
          body: { name: unique('copy'), size: 'small', snapshot: snapshot.name },
        });
        expect((await settle(copy)).state).toBe('succeeded');
        const read = await exec(
          copy.body.computer.id,
          'cat /home/svc/proj/a.txt; stat -c %a /home/svc/proj/a.txt',
        );
        expect(read).toMatchObject({ exit_code: 0, stdout: 'hello\n600\n' });

        expect((await t.call('DELETE', `${ws()}/snapshots/${snapshot.id}`, { token: token() })).status).toBe(
          204,
        );
        expect(await imageGone(snapshot)).toBe(true);
        for (const computer of [source, copy.body.computer.id])
          expect(
            (await settle(await t.call('DELETE', `${ws()}/computers/${computer}`, { token: token() }))).state,
          ).toBe('succeeded');
      });

      test("deleting a workspace removes its snapshots' images from the Engine", async () => {
        const other = await t.team();
        const base = `/v1/workspaces/${other.workspace.id}`;
        const created = await t.call('POST', `${base}/computers`, {
          token: other.owner.token,
          body: { name: unique('src'), size: 'small', image: 'busybox' },
        });
        const id = created.body.operations[0].id;
        await t.call('GET', `/v1/operations/${id}?wait=30`, { token: other.owner.token });
        const made = await t.call('POST', `${base}/snapshots`, {
          token: other.owner.token,
          body: { name: unique('snap'), computer: created.body.computer.id },
        });
        const done = await t.call('GET', `/v1/operations/${made.body.operations[0].id}?wait=30`, {
          token: other.owner.token,
        });
        expect(done.body.operation.state).toBe('succeeded');
        expect(await imageGone(made.body.snapshot)).toBe(false);
        const removed = await t.call('DELETE', `${base}/computers/${created.body.computer.id}`, {
          token: other.owner.token,
        });
        await t.call('GET', `/v1/operations/${removed.body.operations[0].id}?wait=30`, {
          token: other.owner.token,
        });
        expect((await t.call('DELETE', base, { token: other.owner.token })).status).toBe(204);
        expect(await imageGone(made.body.snapshot)).toBe(true);
      });
    },
    ['pglite'],
  );
});
