// A command's output streamed as a real container writes it (SVC_DRIVER=docker): what it prints
// reaches `GET /operations/{operation}/output` while it still runs, not when it ends.
import { readFileSync } from 'node:fs';
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

      test("sh -c 'cat /proc/uptime; sleep 2; echo b': its first line reaches the stream within 500 ms, while it runs", async () => {
        // The container shares the host's kernel, so /proc/uptime is one clock on both sides: the line
        // says when the command wrote it, and the test reads the same clock when the event arrives.
        const uptime = () => Number.parseFloat(readFileSync('/proc/uptime', 'utf8'));
        const run = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers/${computer}/run`, {
          token: team.editor.token,
          body: { argv: ['sh', '-c', 'cat /proc/uptime; sleep 2; echo b'] },
        });
        expect(run.status).toBe(202);
        const id = run.body.operations[0].id;
        const stream = opened(
          await openStream(t.app.fetch, `/v1/operations/${id}/output`, 'OperationOutputStreamItem', {
            token: team.editor.token,
          }),
        );
        const first = await stream.waitFor((e) => e.event === 'output', 20_000);
        const arrived = uptime() - (performance.now() - first.at) / 1000;
        const written = Number.parseFloat(first.data.data);
        expect(arrived - written).toBeLessThan(0.5);
        const running = await t.call('GET', `/v1/operations/${id}`, { token: team.editor.token });
        expect(running.body.operation.state).toBe('running');
        await stream.closed;
        const b = stream.events.find((e) => e.event === 'output' && e.data.data.includes('b'));
        expect((b?.at ?? 0) - first.at).toBeGreaterThan(1500);
        expect(stream.events.at(-1)).toMatchObject({ event: 'exit', data: { exit_code: 0 } });
        const stdout = stream.events
          .filter((e) => e.event === 'output' && e.data.stream === 'stdout')
          .map((e) => e.data.data)
          .join('');
        const done = await t.call('GET', `/v1/operations/${id}`, { token: team.editor.token });
        expect(stdout).toBe(done.body.operation.result.execution.stdout);
        expect(stream.violations).toEqual([]);
      });
    },
    ['pglite'],
  );
});
