// `/mcp` is no side door (issue: "/mcp accepts tokens of revoked keys and deleted principals, ignores
// the body limit, is not rate-limited"): it shares the authentication, body limit and rate limits of
// `/v1`, so every attack refused there is refused here, with the same envelope and headers.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { AccessTokens } from '../../src/identity/auth/access-token.js';
import type { KeyFile } from '../../src/identity/auth/keypair.js';
import { newId } from '../../src/platform/ids.js';
import { describeEngines } from '../support/databases.js';
import type { Answer, Harness } from './support/harness.js';
import { BASE_URL, startHarness } from './support/harness.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attack', version: '0' } },
};
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/** The refusal `/v1` gives: status, code, `request_id` = `Request-Id`, and the credential never echoed. */
function expectRefused(answer: Answer, status: number, code: string, what: string): void {
  expect(answer.status, `${what}: ${answer.text}`).toBe(status);
  const error = (answer.body as { error: Record<string, unknown> }).error;
  expect(error.code, what).toBe(code);
  expect(error.request_id, what).toBe(answer.headers.get('request-id'));
  expect(answer.text).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
  if (status === 401) expect(answer.headers.get('www-authenticate'), what).toMatch(/^Bearer\b/);
}

/** An SDK client on the in-process app (no socket), sending `token`. */
async function sdkClient(h: Harness, token: string): Promise<Client> {
  const client = new Client({ name: 'side-door', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://svc.test/mcp'), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: (url, init) => h.app.fetch(new Request(url, init)),
    }),
  );
  return client;
}

describeEngines('/mcp shares the /v1 authentication, body limit and rate limits', (engine) => {
  let h: Harness;
  const mcp = (token: string | undefined, json: unknown = INITIALIZE) =>
    h.call('POST', '/mcp', { token, json, headers: MCP_HEADERS });

  /** A service account in the bootstrap workspace with one key, exchanged for an access token. */
  const serviceAccountToken = async (role: string) => {
    const ws = h.workspace.id;
    const sa = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts`, {
      token: h.ownerToken,
      idempotencyKey: true,
      json: { name: `mcp-${newId().slice(-6)}`, role },
    });
    const saId = (sa.service_account as { id: string }).id;
    const created = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts/${saId}/keys`, {
      token: h.ownerToken,
      idempotencyKey: true,
    });
    const file = (created.key as { key_file: KeyFile }).key_file;
    return { ws, saId, file, token: await h.exchange(file) };
  };

  beforeAll(async () => {
    h = await startHarness(await engine.open());
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a valid token lists and calls tools through the official SDK client', async () => {
    const client = await sdkClient(h, h.ownerToken);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(10);
    const result = await client.callTool({ name: 'get_me', arguments: {} });
    expect(result.isError).toBeFalsy();
    await client.close();
  });

  test('revoked key: its access token is refused at /mcp with 401 before any MCP message is read', async () => {
    const { ws, saId, file, token } = await serviceAccountToken('viewer');
    expect((await mcp(token)).status).toBe(200);
    await h.expectCall(204, 'DELETE', `/v1/workspaces/${ws}/service-accounts/${saId}/keys/${file.key_id}`, {
      token: h.ownerToken,
    });
    expectRefused(await mcp(token), 401, 'unauthenticated', 'token of a revoked key');
    await expect(sdkClient(h, token)).rejects.toThrow(/401|unauthenticated|Unauthorized/i);
  });

  test('deleted principal: its access token is refused at /mcp', async () => {
    const { ws, saId, token } = await serviceAccountToken('editor');
    expect((await mcp(token)).status).toBe(200);
    await h.expectCall(204, 'DELETE', `/v1/workspaces/${ws}/service-accounts/${saId}`, {
      token: h.ownerToken,
    });
    expectRefused(await mcp(token), 401, 'unauthenticated', 'token of a deleted service account');
  });

  test.each([
    ['no Authorization header', async () => undefined],
    ['garbage', async () => 'not-a-jwt'],
    [
      'forged: a well-formed access token signed by a key the server never issued',
      async () => {
        const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
        const iat = Math.floor(Date.now() / 1000);
        return new SignJWT({
          iss: BASE_URL,
          aud: BASE_URL,
          sub: h.ownerUserId,
          jti: newId(),
          iat,
          exp: iat + 600,
        })
          .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: 'forged' })
          .sign(privateKey);
      },
    ],
    [
      'expired: signed by the server an hour ago',
      async () => {
        const past = new AccessTokens(h.app.deps.serverKeys, {
          baseUrl: BASE_URL,
          now: () => Date.now() - 3_600_000,
        });
        return (await past.issue(h.ownerUserId)).access_token;
      },
    ],
  ])('%s → 401 unauthenticated at /mcp', async (what, token) => {
    const answer = await mcp(await token());
    expectRefused(answer, 401, 'unauthenticated', what);
  });

  test('a 3 MiB body → 413 payload_too_large in the error envelope, as on /v1', async () => {
    const big = { ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(3 * 1024 * 1024) } };
    expectRefused(await mcp(h.ownerToken, big), 413, 'payload_too_large', '3 MiB body');
  });

  test('over the principal rate limit → 429 rate_limited with Retry-After, counted with /v1', async () => {
    const limited = await startHarness(await engine.open(), {
      env: { SVC_RATE_LIMITS: 'principal=3/60,workspace_mutations=100/60' },
    });
    try {
      const token = limited.ownerToken;
      const call = () => limited.call('POST', '/mcp', { token, json: INITIALIZE, headers: MCP_HEADERS });
      expect((await limited.call('GET', '/v1/me', { token })).status).toBe(200);
      const first = await call();
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit')).toMatch(/^"principal";r=1;/);
      expect((await call()).status).toBe(200);
      const refused = await call();
      expectRefused(refused, 429, 'rate_limited', 'fourth request in the window');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((refused.body as { error: { details: { policy: string } } }).error.details.policy).toBe(
        'principal',
      );
      // The anonymous OAuth endpoints beside /mcp are counted too (by client address).
      const register = () =>
        limited.call('POST', '/oauth/register', { json: { redirect_uris: ['http://127.0.0.1:1/cb'] } });
      const answers = [await register(), await register(), await register(), await register()];
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 429]);
      expectRefused(answers[3] as Answer, 429, 'rate_limited', 'fourth registration in the window');
    } finally {
      await limited.close();
    }
  }, 90_000); // a second database and app: ~3 s of PGlite start-up alone, more beside the fuzzer
});
