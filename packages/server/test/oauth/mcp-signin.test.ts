// Sign-in by URL alone: the official MCP SDK client, given only `<origin>/mcp`, finds the protected
// resource metadata from the 401, the authorization server metadata, registers itself, sends the
// person to the browser sign-in (headless Chromium fills the form), exchanges the code with PKCE and
// `resource`, then calls a tool with an audience-bound token.
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { CHROMIUM_PATH, launchChromium } from '@svc/tools/browser';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { App } from '../../src/compose/app.js';
import { createApp } from '../../src/compose/app.js';
import { bootstrap } from '../../src/compose/bootstrap.js';
import { loadConfig } from '../../src/compose/config.js';
import { listen } from '../../src/http/node-adapter.js';
import { setLocalAccount } from '../../src/identity/signin/index.js';

const EMAIL = 'grace@example.com';
const PASSWORD = 'a long and correct password';

/** The loopback callback an MCP client on the person's machine listens on: it captures the code. */
async function callbackServer() {
  let resolveCode: (code: string) => void = () => {};
  const code = new Promise<string>((resolve) => {
    resolveCode = resolve;
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const value = url.searchParams.get('code');
    if (value) resolveCode(value);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(value ? 'signed in' : 'no code');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    code,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An OAuthClientProvider held in memory, as an MCP client would keep it. */
class MemoryProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'sdk-oauth-test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return 'state-of-the-test';
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const missing = !existsSync(CHROMIUM_PATH);
if (missing && process.env.CI) throw new Error(`Chromium is missing at ${CHROMIUM_PATH}`);

describe.skipIf(missing)('MCP sign-in by URL (SDK OAuth client, Chromium, browser sign-in)', () => {
  let app: App | undefined;
  let running: Awaited<ReturnType<typeof listen>>;
  let origin: string;

  beforeAll(async () => {
    running = await listen((request, env) =>
      app ? app.fetch(request, env) : Promise.resolve(new Response('starting', { status: 503 })),
    );
    origin = running.url;
    const baseUrl = `${origin}/v1`;
    const loaded = loadConfig({ PORT: '0', SVC_RATE_LIMITS: 'off' }, { sandbox: true });
    app = await createApp({ config: { ...loaded, baseUrl, tokenUrl: `${baseUrl}/auth/token` } });
    const dir = mkdtempSync(join(tmpdir(), 'svc-oauth-'));
    await bootstrap(app.db, { baseUrl, keyFilePath: join(dir, 'bootstrap-key.json') });
    await setLocalAccount(app.db, { email: EMAIL, password: PASSWORD });
  });
  afterAll(async () => {
    await running?.close();
    await app?.close();
  });

  test('401 names the metadata; the metadata documents answer', async () => {
    const refused = await fetch(`${origin}/mcp`, { method: 'POST' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource"`,
    );
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    const resource = await (await fetch(`${origin}/.well-known/oauth-protected-resource`)).json();
    expect(resource).toMatchObject({ resource: `${origin}/mcp`, authorization_servers: [origin] });
    const server = await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      issuer: origin,
      authorization_endpoint: `${origin}/signin/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
    });
  });

  test('registration refuses a redirect that is neither https nor loopback', async () => {
    const answer = await fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://evil.example/cb'] }),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: 'invalid_redirect_uri' });
  });

  test.each([
    ['a redirect the client did not register', { redirect_uri: 'http://127.0.0.1:1/other' }, 400, undefined],
    ['an unregistered client id', { client_id: 'mcp.forged.signature' }, 400, undefined],
    ['a resource of another service', { resource: 'https://elsewhere.example/mcp' }, 303, 'invalid_target'],
    ['no PKCE challenge', { code_challenge: null }, 303, 'invalid_request'],
  ])('authorize refuses %s', async (_, change, status, error) => {
    const registered = (await (
      await fetch(`${origin}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:1/callback'] }),
      })
    ).json()) as { client_id: string };
    const query: Record<string, string | null> = {
      response_type: 'code',
      client_id: registered.client_id,
      redirect_uri: 'http://127.0.0.1:1/callback',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 's',
      resource: `${origin}/mcp`,
      ...change,
    };
    const url = new URL(`${origin}/signin/authorize`);
    for (const [name, value] of Object.entries(query)) if (value !== null) url.searchParams.set(name, value);
    const answer = await fetch(url, { redirect: 'manual' });
    expect(answer.status).toBe(status);
    if (error) expect(new URL(answer.headers.get('location') ?? '').searchParams.get('error')).toBe(error);
  });

  test.each([
    ['an unknown client', { client_id: 'nobody' }, 401, 'invalid_client'],
    ['an unknown code', { code: 'not-a-code' }, 400, 'invalid_grant'],
    ['another grant type', { grant_type: 'password' }, 400, 'unsupported_grant_type'],
    ['a resource of another service', { resource: 'https://elsewhere.example/mcp' }, 400, 'invalid_target'],
  ])('the token endpoint refuses %s with the RFC 6749 error', async (_, change, status, error) => {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: 'svc-cli',
      code: 'x',
      code_verifier: 'v'.repeat(43),
      redirect_uri: 'http://127.0.0.1:1/callback',
      ...change,
    });
    const answer = await fetch(`${origin}/oauth/token`, { method: 'POST', body: form });
    expect(answer.status).toBe(status);
    expect(await answer.json()).toMatchObject({ error });
  });

  test('the SDK client signs in through the browser and calls a tool with an audience-bound token', async () => {
    const callback = await callbackServer();
    const provider = new MemoryProvider(callback.url);
    const mcpUrl = new URL(`${origin}/mcp`);
    const browser = await launchChromium();
    try {
      const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await expect(new Client({ name: 'oauth', version: '0' }).connect(first)).rejects.toBeInstanceOf(
        UnauthorizedError,
      );
      const authorizationUrl = provider.authorizationUrl;
      if (!authorizationUrl) throw new Error('the SDK did not start an authorization');
      expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${origin}/signin/authorize`);
      expect(authorizationUrl.searchParams.get('resource')).toBe(`${origin}/mcp`);
      expect(authorizationUrl.searchParams.get('client_id')).toMatch(/^mcp\./);

      const page = await browser.newPage();
      await page.goto(authorizationUrl.href);
      // The page names the asking application and where the sign-in goes, not `svc`.
      expect(await page.textContent('p.muted')).toContain('“sdk-oauth-test”');
      expect(await page.textContent('p.muted')).toContain(new URL(callback.url).origin);
      await page.fill('input[name=email]', EMAIL);
      await page.fill('input[name=password]', PASSWORD);
      await page.click('button[type=submit], input[type=submit]');
      const code = await callback.code;

      await first.finishAuth(code);
      const tokens = provider.tokens();
      if (!tokens) throw new Error('no tokens saved');
      expect(decodeJwt(tokens.access_token).aud).toEqual([`${origin}/v1`, `${origin}/mcp`]);
      expect(tokens.refresh_token).toBeTruthy();

      const client = new Client({ name: 'oauth', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
      const me = await client.callTool({ name: 'get_me', arguments: {} });
      expect(me.isError, JSON.stringify(me.content)).toBeFalsy();
      expect(me.structuredContent).toMatchObject({ identity: { principal: { kind: 'user', email: EMAIL } } });
      await client.close();
    } finally {
      await browser.close();
      await callback.close();
    }
  });
});
