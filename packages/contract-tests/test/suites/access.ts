import { createClient, unwrap } from '@svc/client';
import { expect, it } from 'vitest';
import { contractClient, credentials, mockKeyFile, recordingFetch } from '../support/harness.js';
import { baseUrl, onMock } from '../support/target.js';

export function accessSuite(): void {
  it('getHealth answers 200 without a token', async () => {
    const anonymous = createClient({ baseUrl: baseUrl(), fetch: recordingFetch(baseUrl()) });
    const health = await unwrap(anonymous.GET('/health'));
    expect(health.status).toBe('ok');
  });

  it('exchangeToken: a key-file client signs an assertion, gets a token and uses it', async () => {
    const keyFile = onMock ? mockKeyFile(baseUrl()) : credentials().keyFile;
    expect(keyFile, 'exchangeToken against a server needs CONTRACT_KEY_FILE').toBeDefined();
    const client = contractClient({ keyFile: keyFile!, baseUrl: baseUrl() });
    const token = await client.accessToken();
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const { identity } = await unwrap(client.GET('/me'));
    expect(identity.principal.id).toMatch(/^[0-9a-hjkmnp-tv-z]{27}$/);
  });

  it('exchangeToken without a credential is 401 unauthenticated', async () => {
    const anonymous = contractClient({ token: undefined, getToken: undefined });
    const { error, response } = await anonymous.POST('/auth/token', {
      params: { header: {} },
      body: { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' },
    });
    expect(response.status).toBe(401);
    expect(error?.error.code).toBe('unauthenticated');
  });

  it('getMe returns the identity and the caller workspaces with roles', async () => {
    const { identity } = await unwrap(contractClient().GET('/me'));
    expect(['user', 'service_account']).toContain(identity.principal.kind);
    for (const ws of identity.workspaces) expect(['viewer', 'editor', 'admin', 'owner']).toContain(ws.role);
  });

  it('getMe without a token is 401 unauthenticated with WWW-Authenticate: Bearer', async () => {
    const anonymous = createClient({ baseUrl: baseUrl(), fetch: recordingFetch(baseUrl()) });
    const { error, response } = await anonymous.GET('/me');
    expect(response.status).toBe(401);
    expect(error?.error.code).toBe('unauthenticated');
    expect(response.headers.get('WWW-Authenticate') ?? '').toMatch(/^Bearer\b/);
  });
}
