import { afterAll, beforeAll, expect, test } from 'vitest';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

describeEngines('handlers: service accounts and keys', (engine) => {
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    t = await openTestApp(engine, { env: { SVC_QUOTA_ACTIVE_KEYS_PER_SERVICE_ACCOUNT: '2' } });
    team = await t.team();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.id}`;

  async function account(role = 'editor') {
    const answer = await t.call('POST', `${ws()}/service-accounts`, {
      token: team.admin.token,
      body: { name: unique('ci'), role },
    });
    expect(answer.status).toBe(201);
    return answer.body.service_account as { id: string; name: string };
  }
  async function tokenFor(keyFile: {
    key_id: string;
    principal_id: string;
    algorithm: 'EdDSA' | 'ES256';
    private_key: string;
  }) {
    const assertion = await signAssertion(keyFile, { tokenUrl: t.app.deps.config.tokenUrl });
    return t.call('POST', '/v1/auth/token', { token: assertion });
  }

  test('create, read by name, rename, 409 on a taken name; admins only, owner to grant owner', async () => {
    const created = await account();
    expect(created).toMatchObject({
      display_name: created.name,
      role: 'editor',
      workspace_id: team.workspace.id,
    });
    const byName = await t.call('GET', `${ws()}/service-accounts/${created.name}`, {
      token: team.viewer.token,
    });
    expect(byName.body.service_account.id).toBe(created.id);
    const other = await account();
    const clash = await t.call('PATCH', `${ws()}/service-accounts/${created.id}`, {
      token: team.admin.token,
      body: { name: other.name },
    });
    expect(errorOf(clash).code).toBe('already_exists');
    const renamed = await t.call('PATCH', `${ws()}/service-accounts/${created.id}`, {
      token: team.admin.token,
      body: { name: unique('renamed'), display_name: 'CI bot', role: 'viewer' },
    });
    expect(renamed.body.service_account).toMatchObject({ display_name: 'CI bot', role: 'viewer' });
    expect(
      errorOf(
        await t.call('POST', `${ws()}/service-accounts`, {
          token: team.editor.token,
          body: { name: unique('x'), role: 'viewer' },
        }),
      ).code,
    ).toBe('permission_denied');
    expect(
      errorOf(
        await t.call('POST', `${ws()}/service-accounts`, {
          token: team.admin.token,
          body: { name: unique('x'), role: 'owner' },
        }),
      ).code,
    ).toBe('permission_denied');
  });

  test('a key: created once with its key file; the file gets a token; revocation takes effect on the next request', async () => {
    const sa = await account();
    const path = `${ws()}/service-accounts/${sa.id}/keys`;
    const created = await t.call('POST', path, { token: team.admin.token, body: { algorithm: 'ES256' } });
    expect(created.status).toBe(201);
    const { key_file: file, ...key } = created.body.key;
    expect(file).toMatchObject({
      type: 'service_account_key',
      key_id: key.id,
      principal_id: sa.id,
      base_url: 'http://svc.test/v1',
    });
    expect(key.public_key).toMatchObject({ kty: 'EC', crv: 'P-256', kid: key.id, alg: 'ES256', use: 'sig' });
    const listed = await t.call('GET', path, { token: team.viewer.token });
    expect(JSON.stringify(listed.body)).not.toContain('PRIVATE KEY');
    const exchanged = await tokenFor(file);
    expect(exchanged.status).toBe(200);
    const access = exchanged.body.token.access_token;
    const me = await t.call('GET', '/v1/me', { token: access });
    expect(me.body.identity.principal).toMatchObject({ id: sa.id, kind: 'service_account' });
    expect((await t.call('DELETE', `${path}/${key.id}`, { token: team.admin.token })).status).toBe(204);
    expect((await t.call('DELETE', `${path}/${key.id}`, { token: team.admin.token })).status).toBe(204);
    expect(errorOf(await t.call('GET', '/v1/me', { token: access })).code).toBe('unauthenticated');
    expect(errorOf(await tokenFor(file)).code).toBe('unauthenticated');
    const revoked = await t.call('GET', path, { token: team.viewer.token });
    expect(revoked.body.keys[0]).toMatchObject({ id: key.id, state: 'revoked' });
  });

  test('quota: active keys per service account → 403 quota_exceeded; a revoked key frees a slot', async () => {
    const sa = await account();
    const path = `${ws()}/service-accounts/${sa.id}/keys`;
    const first = await t.call('POST', path, { token: team.admin.token });
    expect((await t.call('POST', path, { token: team.admin.token })).status).toBe(201);
    const over = await t.call('POST', path, { token: team.admin.token });
    expect(errorOf(over)).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'active_keys_per_service_account', limit: 2 },
    });
    await t.call('DELETE', `${path}/${first.body.key.id}`, { token: team.admin.token });
    expect((await t.call('POST', path, { token: team.admin.token })).status).toBe(201);
  });

  test('deleting a service account ends its tokens at once, frees its name, and it reads 404', async () => {
    const sa = await account();
    const keys = `${ws()}/service-accounts/${sa.id}/keys`;
    const file = (await t.call('POST', keys, { token: team.admin.token })).body.key.key_file;
    const access = (await tokenFor(file)).body.token.access_token;
    expect((await t.call('GET', ws(), { token: access })).status).toBe(200);
    expect(
      errorOf(await t.call('DELETE', `${ws()}/service-accounts/${sa.id}`, { token: team.editor.token })).code,
    ).toBe('permission_denied');
    expect(
      (await t.call('DELETE', `${ws()}/service-accounts/${sa.id}`, { token: team.admin.token })).status,
    ).toBe(204);
    expect(errorOf(await t.call('GET', ws(), { token: access })).code).toBe('unauthenticated');
    expect(
      errorOf(await t.call('GET', `${ws()}/service-accounts/${sa.id}`, { token: team.viewer.token })).code,
    ).toBe('not_found');
    const again = await t.call('POST', `${ws()}/service-accounts`, {
      token: team.admin.token,
      body: { name: sa.name, role: 'viewer' },
    });
    expect(again.status).toBe(201);
  });
});
