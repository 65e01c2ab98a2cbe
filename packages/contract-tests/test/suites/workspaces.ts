import { paginate, unwrap } from '@svc/client';
import { expect, it } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, mockPrefer, uniqueName } from '../support/harness.js';

const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;

export function workspacesSuite(): void {
  const client = () => contractClient();

  it('createWorkspace answers 201 with the workspace', async () => {
    for (const slot of ['workspace', 'otherWorkspace'] as const) {
      const name = uniqueName('ct');
      const { workspace } = await unwrap(
        client().POST('/workspaces', { params: { header: { 'Idempotency-Key': key() } }, body: { name } }),
      );
      expect(workspace.id).toMatch(ID);
      fx[slot] = workspace.id;
    }
  });

  it('listWorkspaces pages through the caller workspaces', async () => {
    const seen: string[] = [];
    for await (const ws of paginate(client(), '/workspaces', { params: { query: { limit: 50 } } }))
      seen.push(ws.id);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('listWorkspaces with limit=0 is 400 invalid_argument', async () => {
    const { error, response } = await client().GET('/workspaces', { params: { query: { limit: 0 } } });
    expect(response.status).toBe(400);
    expect(error?.error.code).toBe('invalid_argument');
  });

  it('getWorkspace reads one workspace', async () => {
    const { workspace } = await unwrap(
      client().GET('/workspaces/{workspace}', { params: { path: { workspace: fx.workspace } } }),
    );
    expect(workspace.id).toMatch(ID);
  });

  it('getWorkspace of an unknown workspace is 404 not_found', async () => {
    const { error, response } = await client().GET('/workspaces/{workspace}', {
      params: { path: { workspace: uniqueName('no-such') } },
      headers: mockPrefer('code=404'),
    });
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe('not_found');
  });

  it('updateWorkspace changes the display name', async () => {
    const { workspace } = await unwrap(
      client().PATCH('/workspaces/{workspace}', {
        params: { path: { workspace: fx.workspace }, header: {} },
        body: { display_name: 'Contract tests' },
      }),
    );
    expect(workspace.id).toMatch(ID);
  });

  it('createServiceAccount answers 201 with the service account', async () => {
    const { service_account } = await unwrap(
      client().POST('/workspaces/{workspace}/service-accounts', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: { name: uniqueName('ci'), role: 'editor' },
      }),
    );
    fx.serviceAccount = service_account.id;
    expect(service_account.role).toBe('editor');
  });

  it('listServiceAccounts, getServiceAccount and updateServiceAccount', async () => {
    const path = { workspace: fx.workspace, service_account: fx.serviceAccount };
    const { service_accounts } = await unwrap(
      client().GET('/workspaces/{workspace}/service-accounts', {
        params: { path: { workspace: fx.workspace } },
      }),
    );
    expect(service_accounts.length).toBeGreaterThan(0);
    await unwrap(
      client().GET('/workspaces/{workspace}/service-accounts/{service_account}', { params: { path } }),
    );
    const { service_account } = await unwrap(
      client().PATCH('/workspaces/{workspace}/service-accounts/{service_account}', {
        params: { path, header: {} },
        body: { display_name: 'Contract CI' },
      }),
    );
    expect(service_account.id).toMatch(ID);
  });

  it('createKey returns the private key once; listKeys shows no private key', async () => {
    const path = { workspace: fx.workspace, service_account: fx.serviceAccount };
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/service-accounts/{service_account}/keys', {
        params: { path, header: { 'Idempotency-Key': key() } },
        body: { algorithm: 'EdDSA' },
      }),
    );
    fx.key = created.key.id;
    expect(JSON.stringify(created)).toContain('-----BEGIN PRIVATE KEY-----');
    const listed = await unwrap(
      client().GET('/workspaces/{workspace}/service-accounts/{service_account}/keys', { params: { path } }),
    );
    expect(listed.keys.length).toBeGreaterThan(0);
    expect(JSON.stringify(listed)).not.toContain('PRIVATE KEY');
  });

  it('createMember, listMembers, getMember and updateMember (the service account joins another workspace)', async () => {
    const workspace = fx.otherWorkspace;
    const { member } = await unwrap(
      client().POST('/workspaces/{workspace}/members', {
        params: { path: { workspace }, header: { 'Idempotency-Key': key() } },
        body: { principal_id: fx.serviceAccount, role: 'viewer' },
      }),
    );
    fx.member = member.id;
    const { members } = await unwrap(
      client().GET('/workspaces/{workspace}/members', { params: { path: { workspace } } }),
    );
    expect(members.length).toBeGreaterThan(0);
    const path = { workspace, member: fx.member };
    await unwrap(client().GET('/workspaces/{workspace}/members/{member}', { params: { path } }));
    const updated = await unwrap(
      client().PATCH('/workspaces/{workspace}/members/{member}', {
        params: { path, header: {} },
        body: { role: 'editor' },
      }),
    );
    expect(updated.member.id).toMatch(ID);
  });
}
