import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@svc/tools/spec-mock';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runHostsCommand } from '../../src/compose/commands/hosts.js';
import { LABEL } from '../../src/computers/docker/labels.js';
import type { FleetDriver } from '../../src/fleet/fleet-driver.js';
import { hostByName } from '../../src/fleet/repositories/hosts.js';
import { newId } from '../../src/platform/ids.js';
import { openTestApp, type Team, type TestApp, unique } from '../support/app.js';
import { describePostgres } from '../support/databases.js';
import { describeEngines } from '../support/engines.js';

// A remote Engine reached over mutual TLS (design §4.4, SECURITY.md "Driver"): a dockerd started
// here with --tlsverify on 127.0.0.1 (loopback only), certificates made here by openssl. The control
// plane's client key is stored sealed; a client certificate the Engine's CA did not sign is refused
// by the Engine, so that host never turns healthy.

const port = await freePort();
const pki = mkdtempSync(join(tmpdir(), 'svc-tls-'));
chmodSync(pki, 0o700);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: pki, stdio: 'ignore' });

function makePki(): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  for (const ca of ['ca', 'other-ca'])
    openssl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      `${ca}-key.pem`,
      '-out',
      `${ca}.pem`,
      '-days',
      '1',
      '-subj',
      `/CN=svc test ${ca}`,
    );
  const sign = (name: string, ca: string, ext: string) => {
    openssl('req', ...ec, '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(join(pki, `${name}.ext`), ext);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}-key.pem`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
    chmodSync(join(pki, `${name}-key.pem`), 0o600);
  };
  sign('server', 'ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  sign('client', 'ca', 'extendedKeyUsage=clientAuth\n');
  sign('stranger', 'other-ca', 'extendedKeyUsage=clientAuth\n');
}

describeEngines(
  'fleet: a remote Engine over mutual TLS',
  1,
  (engines) => {
    describePostgres('SVC_DRIVER=docker, hosts from the hosts command', (engine) => {
      const env = {
        SVC_SECRET_KEY: randomBytes(32).toString('base64url'),
        SVC_DRIVER: 'docker',
        SVC_DOCKER_HOST_NAME: '',
        SVC_DOCKER_INSTANCE: `test-tls-${randomBytes(4).toString('hex')}`,
        SVC_HOST_HEARTBEAT_MS: '200',
        SVC_HOST_UNHEALTHY_MS: '2000',
      };
      let t: TestApp;
      let team: Team;
      beforeAll(async () => {
        t = await openTestApp(engine, { env });
        team = await t.team();
      });
      afterAll(async () => {
        await t?.close();
        rmSync(pki, { recursive: true, force: true });
      });
      const fleet = () => t.app.deps.driver as FleetDriver;
      async function hosts(...argv: string[]) {
        let out = '';
        let err = '';
        const code = await runHostsCommand(argv, {
          stdout: { write: (text: string) => (out += text) },
          stderr: { write: (text: string) => (err += text) },
          env,
          db: t.db,
        });
        return { code, out, err };
      }
      const engineUrl = `https://127.0.0.1:${port}`;
      const capacity = ['--capacity', 'vcpus=8,memory_mib=16384,computers=4'];

      test('refused: plain tcp or http, TLS files missing, a key file others may read, a file that is not PEM', async () => {
        for (const address of [`tcp://127.0.0.1:${port}`, `http://127.0.0.1:${port}`])
          expect(await hosts('add', 'plain', '--engine', address, ...capacity)).toMatchObject({
            code: 2,
            err: expect.stringContaining('never plain tcp:// or http://'),
          });
        expect(
          await hosts('add', 'half', '--engine', engineUrl, '--tls-ca', join(pki, 'ca.pem'), ...capacity),
        ).toMatchObject({
          code: 2,
          err: expect.stringContaining('needs --tls-ca, --tls-cert and --tls-key'),
        });
        const loose = join(pki, 'loose-key.pem');
        writeFileSync(loose, 'x', { mode: 0o644 });
        chmodSync(loose, 0o644);
        const tls = (key: string, ca = join(pki, 'ca.pem')) => [
          '--tls-ca',
          ca,
          '--tls-cert',
          join(pki, 'client.pem'),
          '--tls-key',
          key,
        ];
        expect(await hosts('add', 'loose', '--engine', engineUrl, ...tls(loose), ...capacity)).toMatchObject({
          code: 1,
          err: expect.stringContaining('may be read by others'),
        });
        expect(
          await hosts(
            'add',
            'notpem',
            '--engine',
            engineUrl,
            ...tls(join(pki, 'client-key.pem'), join(pki, 'client.ext')),
            ...capacity,
          ),
        ).toMatchObject({ code: 1, err: expect.stringContaining('--tls-ca is not a PEM certificate') });
        expect(await hostByName(t.db, 'loose')).toBeUndefined();
      });

      test('registered with its CA and a client certificate: healthy, takes a computer, runs its command', async () => {
        const added = await hosts(
          'add',
          'remote',
          '--engine',
          engineUrl,
          '--tls-ca',
          join(pki, 'ca.pem'),
          '--tls-cert',
          join(pki, 'client.pem'),
          '--tls-key',
          join(pki, 'client-key.pem'),
          ...capacity,
        );
        expect(added).toMatchObject({ code: 0, err: '' });
        // The key is stored sealed, never as PEM.
        const { rows } = await t.db.query<{ row: string }>(
          `SELECT to_jsonb(h)::text AS row FROM hosts h WHERE name = 'remote'`,
        );
        expect(rows[0]?.row).not.toContain('PRIVATE KEY');
        await fleet().heartbeat();
        expect((await hosts('list')).out).toMatch(/remote\s+healthy/);
        const created = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
          token: team.editor.token,
          body: { name: unique('tls'), size: 'small', image: 'busybox' },
        });
        expect(created.status).toBe(202);
        const id = created.body.computer.id as string;
        await expect
          .poll(
            async () =>
              (
                await t.call('GET', `/v1/workspaces/${team.workspace.id}/computers/${id}`, {
                  token: team.viewer.token,
                })
              ).body.computer.state,
            { timeout: 30_000, interval: 200 },
          )
          .toBe('running');
        const ran = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers/${id}/exec`, {
          token: team.editor.token,
          body: { argv: ['echo', 'over tls'] },
        });
        expect(ran.status).toBe(200);
        expect(ran.body.execution).toMatchObject({ exit_code: 0, stdout: 'over tls\n' });
        // The container is on that Engine (asked through its local socket, beside the TLS listener).
        const containers = await engines()[0]?.docker.listContainers({
          all: true,
          filters: { label: [`${LABEL.computer}=${id}`] },
        });
        expect(containers).toHaveLength(1);
      });

      test('a client certificate the Engine does not trust: the host never turns healthy, and takes nothing', async () => {
        expect(
          await hosts(
            'add',
            'stranger',
            '--engine',
            engineUrl,
            '--tls-ca',
            join(pki, 'ca.pem'),
            '--tls-cert',
            join(pki, 'stranger.pem'),
            '--tls-key',
            join(pki, 'stranger-key.pem'),
            ...capacity,
          ),
        ).toMatchObject({ code: 0 });
        await hosts('cordon', 'remote');
        await fleet().heartbeat();
        expect((await hosts('list')).out).toMatch(/stranger\s+unhealthy/);
        const refused = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
          token: team.editor.token,
          body: { name: unique('tls'), size: 'small', image: 'busybox' },
        });
        expect(refused.status).toBe(503);
        expect(refused.body.error.details).toMatchObject({ reason: 'no_capacity' });
      });

      test('a host whose sealed key does not open (copied from another row) is left out; the rest of the fleet goes on', async () => {
        await t.db.query(
          `INSERT INTO hosts (id, name, engine, tls_ca_pem, tls_cert_pem, tls_key_sealed,
                              capacity_vcpus, capacity_memory_mib, capacity_computers)
           SELECT $1, 'tampered', engine, tls_ca_pem, tls_cert_pem, tls_key_sealed, 8, 16384, 4
             FROM hosts WHERE name = 'remote'`,
          [newId()],
        );
        expect(await hosts('uncordon', 'remote')).toMatchObject({ code: 0 });
        // Longer than SVC_HOST_UNHEALTHY_MS, heartbeats going on: the good host must keep answering.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        await fleet().heartbeat();
        const list = (await hosts('list')).out;
        expect(list).toMatch(/remote\s+healthy/);
        expect(list).toMatch(/tampered\s+unhealthy/);
      });
    });
  },
  {
    extraArgs: () => {
      makePki();
      return [
        '--tlsverify',
        '--tlscacert',
        join(pki, 'ca.pem'),
        '--tlscert',
        join(pki, 'server.pem'),
        '--tlskey',
        join(pki, 'server-key.pem'),
        '-H',
        `tcp://127.0.0.1:${port}`,
      ];
    },
  },
);
