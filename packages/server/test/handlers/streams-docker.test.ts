// A command's output streamed as a real container writes it (SVC_DRIVER=docker): what it prints
// reaches `GET /operations/{operation}/output` while it still runs, not when it ends.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { describeDocker } from '../support/docker.js';
import { opened, openStream } from '../support/streams.js';

describeDocker('handlers: output streams with the Docker driver', (docker) => {
  describeEngines(
    'SVC_DRIVER=docker',
    (engine) => {
      let t: TestApp;
      let team: Team;
      let computer: string;
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
        const created = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
          token: team.editor.token,
          body: { name: unique('out'), size: 'small', image: 'busybox' },
        });
        expect(created.status).toBe(202);
        const done = await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=30`, {
          token: team.editor.token,
        });
        expect(done.body.operation.state).toBe('succeeded');
        computer = created.body.computer.id;
      });
      afterAll(() => t.close());

      test("sh -c 'echo a; sleep 2; echo b': a reaches the stream within 500 ms, while the command runs", async () => {
        const run = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers/${computer}/run`, {
          token: team.editor.token,
          body: { argv: ['sh', '-c', 'echo a; sleep 2; echo b'] },
        });
        expect(run.status).toBe(202);
        const id = run.body.operations[0].id;
        const stream = opened(
          await openStream(t.app.fetch, `/v1/operations/${id}/output`, 'OperationOutputStreamItem', {
            token: team.editor.token,
          }),
        );
        const a = await stream.waitFor((e) => e.event === 'output' && e.data.data.includes('a'), 10_000);
        const running = await t.call('GET', `/v1/operations/${id}`, { token: team.editor.token });
        expect(running.body.operation.state).toBe('running');
        // When the command started, as the operation records it (this process's clock).
        const startedAt = Date.parse(running.body.operation.started_at);
        const aAt = Date.now() - (performance.now() - a.at);
        expect(aAt - startedAt).toBeLessThan(500);
        await stream.closed;
        const b = stream.events.find((e) => e.event === 'output' && e.data.data.includes('b'));
        expect(b).toBeDefined();
        expect((b?.at ?? 0) - a.at).toBeGreaterThan(1500);
        expect(stream.events.at(-1)).toMatchObject({ event: 'exit', data: { exit_code: 0 } });
        expect(stream.violations).toEqual([]);
      });
    },
    ['pglite'],
  );
});
