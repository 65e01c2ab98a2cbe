import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { describeDocker } from '../support/docker.js';
import { opened, openStream } from '../support/streams.js';

// The computers lifecycle of handlers/computers.test.ts, through the API, with SVC_DRIVER=docker: the
// app opens the Docker driver and its reconciler itself, as `svc-server` does.
describeDocker('handlers: computers with the Docker driver', (docker) => {
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
            // Containers made for each computer (the pool's are computers-pool-docker.test.ts's).
            SVC_POOL: 'off',
          },
        });
        team = await t.team();
      });
      afterAll(() => t.close());
      const ws = () => `/v1/workspaces/${team.workspace.id}`;
      const token = () => team.editor.token;
      async function settle(answer: { status: number; body: { operations: { id: string }[] } }) {
        expect(answer.status).toBe(202);
        const id = answer.body.operations[0]!.id;
        return (await t.call('GET', `/v1/operations/${id}?wait=20`, { token: token() })).body.operation;
      }
      const state = async (path: string) =>
        (await t.call('GET', path, { token: token() })).body.computer.state;

      test('create, the state machine, stop, start, restart and delete run a real container', async () => {
        const created = await t.call('POST', `${ws()}/computers`, {
          token: token(),
          body: { name: unique('box'), size: 'small', image: 'busybox', labels: { team: 'web' } },
        });
        const path = `${ws()}/computers/${created.body.computer.id}`;
        expect((await settle(created)).state).toBe('succeeded');
        expect(await state(path)).toBe('running');
        expect((await docker.containers(created.body.computer.id)).map((c) => c.State)).toEqual(['running']);
        expect(errorOf(await t.call('POST', `${path}/start`, { token: token() }))).toMatchObject({
          code: 'invalid_state',
          details: { current_state: 'running', allowed_from: ['stopped', 'failed'] },
        });
        for (const [action, want, container] of [
          ['stop', 'stopped', 'exited'],
          ['start', 'running', 'running'],
          ['restart', 'running', 'running'],
        ] as const) {
          expect((await settle(await t.call('POST', `${path}/${action}`, { token: token() }))).state).toBe(
            'succeeded',
          );
          expect(await state(path)).toBe(want);
          expect((await docker.containers(created.body.computer.id)).map((c) => c.State)).toEqual([
            container,
          ]);
        }
        // Killed behind the service's back: the reconciler (Engine events) moves the computer.
        const [container] = await docker.containers(created.body.computer.id);
        await docker.docker.getContainer(container!.Id).kill();
        await expect.poll(() => state(path), { timeout: 10_000 }).toBe('stopped');
        expect((await settle(await t.call('DELETE', path, { token: token() }))).state).toBe('succeeded');
        expect(await state(path)).toBe('deleted');
        expect(await docker.containers(created.body.computer.id)).toEqual([]);
      });

      test('a terminal in a real container ends with `computer_stopped` when its computer stops', async () => {
        const created = await t.call('POST', `${ws()}/computers`, {
          token: token(),
          body: { name: unique('term'), size: 'small', image: 'busybox' },
        });
        expect((await settle(created)).state).toBe('succeeded');
        const path = `${ws()}/computers/${created.body.computer.id}`;
        const terminal = await t.call('POST', `${path}/terminals`, {
          token: token(),
          body: { cols: 80, rows: 24 },
        });
        expect(terminal.status).toBe(201);
        const stream = opened(
          await openStream(
            t.app.fetch,
            `${path}/terminals/${terminal.body.terminal.id}/output`,
            'TerminalOutputStreamItem',
            { token: token() },
          ),
        );
        try {
          await stream.waitFor((e) => e.event === 'output', 10_000);
          // The stop kills the container under the shell: the end is still said to be the stop's.
          expect((await settle(await t.call('POST', `${path}/stop`, { token: token() }))).state).toBe(
            'succeeded',
          );
          const exit = await stream.waitFor((e) => e.event === 'exit', 10_000);
          expect(exit.data).toMatchObject({ reason: 'computer_stopped' });
        } finally {
          await stream.close();
        }
        expect(stream.violations).toEqual([]);
        expect((await settle(await t.call('DELETE', path, { token: token() }))).state).toBe('succeeded');
      });

      test('an image this host lacks: refused at once with 400 naming the images that run, and nothing takes the name', async () => {
        const name = unique('nope');
        const refused = await t.call('POST', `${ws()}/computers`, {
          token: token(),
          body: { name, size: 'small', image: 'ubuntu-2404' },
        });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toMatchObject({
          code: 'invalid_argument',
          details: {
            field_violations: [
              {
                field: 'image',
                description: expect.stringMatching(
                  /^the image "ubuntu-2404" cannot run on this docker host now; images that do: .*busybox/,
                ),
              },
            ],
          },
        });
        const listed = await t.call('GET', `${ws()}/computers`, { token: token() });
        expect(listed.body.computers.map((c: { name: string }) => c.name)).not.toContain(name);
        const again = await t.call('POST', `${ws()}/computers`, {
          token: token(),
          body: { name, size: 'small', image: 'busybox' },
        });
        expect(again.status).toBe(202);
        expect((await settle(again)).state).toBe('succeeded');
        const path = `${ws()}/computers/${again.body.computer.id}`;
        expect((await settle(await t.call('DELETE', path, { token: token() }))).state).toBe('succeeded');
      });

      test('recover a failed computer: its container running, stopped, or removed (made again, stopped)', async () => {
        const created = await t.call('POST', `${ws()}/computers`, {
          token: token(),
          body: { name: unique('rec'), size: 'small', image: 'busybox' },
        });
        const id = created.body.computer.id;
        const path = `${ws()}/computers/${id}`;
        expect((await settle(created)).state).toBe('succeeded');
        // A computer the record says failed, whatever the Engine did since (set in SQL: no action
        // leaves a container running behind a failed record on purpose).
        const fail = () => t.db.query(`UPDATE computers SET state = 'failed' WHERE id = $1`, [id]);
        const recover = async () =>
          expect((await settle(await t.call('POST', `${path}/recover`, { token: token() }))).state).toBe(
            'succeeded',
          );
        await fail();
        await recover();
        expect(await state(path)).toBe('running');
        const [container] = await docker.containers(id);
        await docker.docker.getContainer(container!.Id).stop({ t: 0 });
        await fail();
        await recover();
        expect(await state(path)).toBe('stopped');
        await docker.docker.getContainer(container!.Id).remove({ force: true, v: true });
        await fail();
        await recover();
        expect(await state(path)).toBe('stopped');
        const again = await docker.containers(id);
        expect(again.map((c) => c.State)).toEqual(['created']);
        expect(again[0]?.Id).not.toBe(container!.Id);
        expect((await settle(await t.call('DELETE', path, { token: token() }))).state).toBe('succeeded');
      });
    },
    ['pglite'],
  );
});
