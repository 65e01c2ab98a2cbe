// End to end: the built `svc` binary against the real server app (`@svc/server`'s createApp, in
// this process on port 0), signing in through headless Chromium (Debian's /usr/bin/chromium via
// playwright-core; no browser is ever downloaded).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_PATH, launchChromium } from '@svc/tools/browser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, connectSvcMcp } from './support/mcp-client.js';
import { type RunningService, startApp } from './support/server.js';

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';

function runSvc(
  args: string[],
  env: Record<string, string>,
): {
  child: ChildProcess;
  done: Promise<{ code: number; stdout: string; stderr: string }>;
  stderr: () => string;
} {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk));
  const done = new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })),
  );
  return { child, done, stderr: () => stderr };
}

async function until<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const missing = [CHROMIUM_PATH, BIN].filter((path) => !existsSync(path));
// .ci/run installs Chromium and turbo builds the CLI first: under CI a missing one is a failure.
if (missing.length > 0 && process.env.CI)
  throw new Error(`e2e cannot run under CI: missing ${missing.join(', ')}`);

describe.skipIf(missing.length > 0)('svc end to end (browser sign-in, refresh, key file)', () => {
  let service: RunningService;
  let browser: Browser;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
    service = await startApp(dir);
    await service.addAccount(EMAIL, PASSWORD);
    env = { SVC_CONFIG_DIR: join(dir, 'config'), SVC_BASE_URL: service.baseUrl };
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  test('login in the browser → token → whoami → mcp as the session → token refreshes → old refresh token refused; key file token accepted', async () => {
    // svc login: prints the address, we sign in as a person would.
    const login = runSvc(['login', '--no-browser'], env);
    const url = await until(() => /(http:\/\/\S+\/signin\/authorize\?\S+)/.exec(login.stderr())?.[1]);
    const page = await browser.newPage();
    await page.goto(url);
    await page.fill('input[name=email]', EMAIL);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page
      .waitForSelector('text=You are signed in to svc', { timeout: 20_000 })
      .catch(async (error: unknown) => {
        throw new Error(
          `sign-in page did not reach the loopback: ${page.url()}\n${await page.content()}\nsvc: ${login.stderr()}`,
          { cause: error },
        );
      });
    const loggedIn = await login.done;
    expect(loggedIn.stderr).not.toContain('error');
    expect(loggedIn.code).toBe(0);
    expect(loggedIn.stdout.trim()).toMatch(JWT);

    const whoami = await runSvc(['--json', 'whoami'], env).done;
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout).identity.principal).toMatchObject({ kind: 'user', email: EMAIL });

    // svc mcp as the signed-in person: its tools call the API with the stored session's token.
    const mcp = await connectSvcMcp(env);
    try {
      const me = await mcp.client.callTool({ name: 'get_me', arguments: {} });
      expect(me.isError, mcp.stderr()).toBeFalsy();
      expect(me.structuredContent).toMatchObject({
        identity: { principal: { kind: 'user', email: EMAIL } },
      });
    } finally {
      await mcp.client.close();
    }

    const sessionFile = join(env.SVC_CONFIG_DIR as string, 'session.json');
    const oldRefresh = JSON.parse(readFileSync(sessionFile, 'utf8')).refresh_token as string;
    const token = await runSvc(['token'], env).done;
    expect(token.code).toBe(0);
    expect(token.stdout.trim()).toMatch(JWT);
    expect(token.stdout.trim()).not.toBe(loggedIn.stdout.trim());
    const newRefresh = JSON.parse(readFileSync(sessionFile, 'utf8')).refresh_token as string;
    expect(newRefresh).not.toBe(oldRefresh);

    const reuse = await fetch(`${service.baseUrl}/auth/token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${oldRefresh}`, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token' }),
    });
    expect(reuse.status).toBe(401);
    expect((await reuse.json()).error.code).toBe('unauthenticated');
    // Reuse revoked the family: the session is gone too.
    expect((await runSvc(['token'], env).done).code).toBe(3);

    // Key-based: SVC_KEY_FILE → svc token → GET /me accepts it.
    const keyToken = await runSvc(['token'], {
      SVC_KEY_FILE: service.keyFilePath,
      SVC_CONFIG_DIR: join(dir, 'none'),
    }).done;
    expect(keyToken.code).toBe(0);
    const me = await fetch(`${service.baseUrl}/me`, {
      headers: { authorization: `Bearer ${keyToken.stdout.trim()}` },
    });
    expect(me.status).toBe(200);
    const keyFile = JSON.parse(readFileSync(service.keyFilePath, 'utf8')) as { principal_id: string };
    expect((await me.json()).identity.principal).toMatchObject({
      id: keyFile.principal_id,
      kind: 'service_account',
    });
  }, 120_000);
});
