import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { describeDocker } from '../support/docker.js';

// A real Debian computer: the catalogue's `debian-13` is svc/debian:13, which `pnpm images:build`
// bootstraps from the Debian mirror (tools/images/debian.sh). Python and git run in it through the API,
// under the driver's rules (user 1000, read-only root, no network), and the catalogue says it is there.
describeDocker(
  'handlers: a Debian computer with the Docker driver',
  (docker) => {
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
        const token = () => team.editor.token;

        test('the catalogue says which images the Engine has: debian-13 and busybox, not ubuntu-2404', async () => {
          const answer = await t.call('GET', '/v1/images?limit=200', { token: token() });
          expect(answer.status).toBe(200);
          const byName = Object.fromEntries(
            answer.body.images.map((image: { name: string }) => [image.name, image]),
          );
          expect(byName['debian-13']).toMatchObject({
            display_name: 'Debian 13 (trixie)',
            os: 'debian',
            version: '13',
            driver: 'docker',
            available: true,
          });
          expect(byName.busybox).toMatchObject({ driver: 'docker', available: true });
          expect(byName['ubuntu-2404']).toMatchObject({ driver: 'docker', available: false });
        });

        test('create debian-13, then python3 and git answer through exec, as user svc in /home/svc', async () => {
          const created = await t.call('POST', `${ws()}/computers`, {
            token: token(),
            body: { name: unique('deb'), size: 'small', image: 'debian-13' },
          });
          expect(created.status).toBe(202);
          const operation = await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=30`, {
            token: token(),
          });
          expect(operation.body.operation).toMatchObject({ state: 'succeeded' });
          const path = `${ws()}/computers/${created.body.computer.id}`;
          const exec = async (argv: string[]) => {
            const answer = await t.call('POST', `${path}/exec`, { token: token(), body: { argv } });
            expect(answer.status).toBe(200);
            return answer.body.execution;
          };
          expect(await exec(['python3', '-c', 'print(1+1)'])).toMatchObject({
            exit_code: 0,
            stdout: '2\n',
            stderr: '',
          });
          const git = await exec(['git', '--version']);
          expect(git).toMatchObject({ exit_code: 0, stderr: '' });
          expect(git.stdout).toMatch(/^git version 2\.\d+\.\d+\n$/);
          expect(
            await exec(['sh', '-c', 'id -un; pwd; . /etc/os-release; echo "$VERSION_CODENAME"']),
          ).toMatchObject({ exit_code: 0, stdout: 'svc\n/home/svc\ntrixie\n' });
          // No way up from user svc: no capabilities, no new privileges, no set-user-ID program.
          expect(
            await exec([
              'sh',
              '-c',
              'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; find / -xdev -type f -perm /6000 2>/dev/null',
            ]),
          ).toMatchObject({ stdout: 'CapEff:\t0000000000000000\nNoNewPrivs:\t1\n' });
          // A repository in the writable home; the root stays read-only.
          const repo = await exec([
            'sh',
            '-c',
            'git init -q r && cd r && echo hi > a && git add a && git -c user.name=t -c user.email=t@example.com commit -qm first && git log --format=%s && touch /usr/x',
          ]);
          expect(repo).toMatchObject({ exit_code: 1, stdout: 'first\n' });
          expect(repo.stderr).toContain('Read-only file system');
          const deleted = await t.call('DELETE', path, { token: token() });
          expect(deleted.status).toBe(202);
          await t.call('GET', `/v1/operations/${deleted.body.operations[0].id}?wait=20`, { token: token() });
        });
      },
      ['pglite'],
    );
  },
  { image: 'svc/debian:13' },
);
