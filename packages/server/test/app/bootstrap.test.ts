import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { BootstrapError, bootstrap } from '../../src/compose/bootstrap.js';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import type { TestApp } from '../support/app.js';
import { openTestApp } from '../support/app.js';
import { describeEngines, describePostgres } from '../support/databases.js';

describeEngines('bootstrap', (engine) => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await openTestApp(engine);
    dir = await mkdtemp(join(tmpdir(), 'svc-bootstrap-'));
  });
  afterAll(() => t.close());

  test('an existing key file is never overwritten: the start fails and the database stays empty', async () => {
    const keyFilePath = join(dir, 'taken.json');
    await writeFile(keyFilePath, 'keep me');
    await expect(bootstrap(t.db, { baseUrl: 'http://svc.test/v1', keyFilePath })).rejects.toBeInstanceOf(
      BootstrapError,
    );
    expect(await readFile(keyFilePath, 'utf8')).toBe('keep me');
    expect((await t.db.query('SELECT 1 FROM principals')).rowCount).toBe(0);
  });

  test('on an empty database: owner account, workspace, owner service account; its key file works for /auth/token → /me', async () => {
    const keyFilePath = join(dir, 'key.json');
    const result = await bootstrap(t.db, { baseUrl: 'http://svc.test/v1', keyFilePath });
    expect(result).toBeDefined();
    expect((await stat(keyFilePath)).mode & 0o777).toBe(0o600);
    const file = JSON.parse(await readFile(keyFilePath, 'utf8'));
    expect(file).toMatchObject({ type: 'service_account_key', base_url: 'http://svc.test/v1' });
    const assertion = await signAssertion(file, { tokenUrl: `${file.base_url}/auth/token` });
    const token = await t.call('POST', '/v1/auth/token', { token: assertion });
    expect(token.status).toBe(200);
    const me = await t.call('GET', '/v1/me', { token: token.body.token.access_token });
    expect(me.body.identity).toMatchObject({
      principal: { kind: 'service_account', name: 'bootstrap' },
      workspaces: [{ id: result?.workspaceId, name: 'default', role: 'owner' }],
    });
    const owners = await t.db.query(
      `SELECT p.kind FROM members m JOIN principals p ON p.id = m.principal_id WHERE m.workspace_id = $1 AND m.role = 'owner' ORDER BY p.kind`,
      [result?.workspaceId],
    );
    expect(owners.rows).toEqual([{ kind: 'service_account' }, { kind: 'user' }]);
    expect(
      await bootstrap(t.db, { baseUrl: 'http://svc.test/v1', keyFilePath: join(dir, 'second.json') }),
    ).toBeUndefined();
  }, 30_000);
});

describePostgres('bootstrap on one PostgreSQL from two replicas at once', (engine) => {
  test('exactly one bootstraps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-bootstrap-'));
    const db = await engine.open();
    const replica = await engine.replica(db);
    const results = await Promise.all([
      bootstrap(db, { baseUrl: 'http://a/v1', keyFilePath: join(dir, 'a.json') }),
      bootstrap(replica, { baseUrl: 'http://b/v1', keyFilePath: join(dir, 'b.json') }),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await db.query(`SELECT 1 FROM workspaces`)).rowCount).toBe(1);
  }, 30_000);
});
