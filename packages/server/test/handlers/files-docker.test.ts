import { afterAll, beforeAll, expect, test } from 'vitest';
import { entriesOf, tarOf } from '../files/file-rules.js';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, ORIGIN, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';
import { describeDocker } from '../support/docker.js';
import { allByteValues, query } from './files-support.js';

// The files API through HTTP with SVC_DRIVER=docker, as `svc-server` runs it: the same answers as on
// the simulated driver (files.test.ts), from a real container's /home volume.
describeDocker('handlers: files with the Docker driver', (docker) => {
  describeEngines(
    'SVC_DRIVER=docker',
    (engine) => {
      let t: TestApp;
      let team: Team;
      let files: string;
      const logs: { message: string; fields: Record<string, unknown> }[] = [];
      beforeAll(async () => {
        t = await openTestApp(engine, {
          env: {
            SVC_DRIVER: 'docker',
            SVC_DOCKER_SOCKET: docker.socketPath,
            SVC_DOCKER_INSTANCE: docker.instance,
            SVC_DOCKER_SWEEP_MS: '60000',
          },
          app: { log: (message, fields) => logs.push({ message, fields: fields ?? {} }) },
        });
        team = await t.team();
        const created = await t.call('POST', `/v1/workspaces/${team.workspace.id}/computers`, {
          token: team.editor.token,
          body: { name: unique('files'), size: 'small', image: 'busybox' },
        });
        expect(created.status).toBe(202);
        const operation = created.body.operations[0].id;
        const done = await t.call('GET', `/v1/operations/${operation}?wait=30`, { token: team.editor.token });
        expect(done.body.operation.state).toBe('succeeded');
        files = `/v1/workspaces/${team.workspace.id}/computers/${created.body.computer.id}/files`;
      }, 60_000);
      afterAll(() => t.close());

      const send = async (method: string, path: string, body?: Uint8Array, type?: string) => {
        const response = await t.app.fetch(
          new Request(`${ORIGIN}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${team.editor.token}`,
              ...(type ? { 'content-type': type } : {}),
            },
            ...(body ? { body: body as BodyInit } : {}),
          }),
        );
        const bytes = new Uint8Array(await response.arrayBuffer());
        const json = response.headers.get('content-type') === 'application/json';
        return {
          status: response.status,
          headers: response.headers,
          bytes,
          body: json ? JSON.parse(Buffer.from(bytes).toString()) : undefined,
        };
      };

      test('a file up and down byte for byte, stat, list, delete; read-only outside /home', async () => {
        const dir = `/home/svc/${unique('d')}`;
        const bytes = allByteValues(4);
        const up = await send(
          'PUT',
          `${files}${query({ path: `${dir}/all.bin`, parents: true, mode: '0640' })}`,
          bytes,
          'application/octet-stream',
        );
        expect(up.status, JSON.stringify(up.body)).toBe(200);
        expect(up.body.file).toMatchObject({
          path: `${dir}/all.bin`,
          size: 1024,
          mode: '0640',
          type: 'file',
        });
        const down = await send('GET', `${files}${query({ path: `${dir}/all.bin` })}`);
        expect(down.status).toBe(200);
        expect(down.headers.get('content-length')).toBe('1024');
        expect(down.headers.get('etag')).toMatch(/^W\/"1024-\d+"$/);
        expect(Buffer.from(down.bytes).equals(Buffer.from(bytes))).toBe(true);
        const listed = await send('GET', `${files}/entries${query({ path: dir })}`);
        expect(listed.body.files.map((f: { name: string }) => f.name)).toEqual(['all.bin']);
        const etc = await send(
          'PUT',
          `${files}${query({ path: '/etc/evil' })}`,
          bytes,
          'application/octet-stream',
        );
        expect(errorOf({ ...etc, body: etc.body })).toMatchObject({
          code: 'invalid_argument',
          details: { field_violations: [{ field: 'path' }] },
        });
        expect((await send('DELETE', `${files}${query({ path: dir, recursive: true })}`)).status).toBe(204);
        const gone = await send('GET', `${files}/stat${query({ path: dir })}`);
        expect(errorOf({ ...gone, body: gone.body })).toMatchObject({
          code: 'not_found',
          details: { path: dir },
        });
        expect(logs.some((l) => l.message === 'file transfer' && l.fields.direction === 'in')).toBe(true);
      }, 60_000);

      test('a tree up as tar and down as tar; a tar with .. is refused', async () => {
        const dir = `/home/svc/${unique('a')}`;
        const tar = await tarOf([
          [{ name: 'src/', type: 'directory' }],
          [{ name: 'src/main.c' }, 'int main() { return 0; }\n'],
        ]);
        const up = await send(
          'PUT',
          `${files}/archive${query({ path: dir, parents: true })}`,
          tar,
          'application/x-tar',
        );
        expect(up.status, JSON.stringify(up.body)).toBe(200);
        expect(up.body.archive).toMatchObject({ path: dir, entries: 2, bytes: 25 });
        const down = await send('GET', `${files}/archive${query({ path: `${dir}/src` })}`);
        expect(down.status).toBe(200);
        const names = (await entriesOf(down.bytes)).map((e) => e.name.replace(/\/$/, ''));
        expect(names.sort()).toEqual(['src', 'src/main.c']);
        const evil = await send(
          'PUT',
          `${files}/archive${query({ path: dir })}`,
          await tarOf([[{ name: '../../etc/x' }, 'x']]),
          'application/x-tar',
        );
        expect(errorOf({ ...evil, body: evil.body })).toMatchObject({
          code: 'invalid_argument',
          details: { rule: 'dot_dot', entry: '../../etc/x' },
        });
      }, 60_000);
    },
    ['pglite'],
  );
});
