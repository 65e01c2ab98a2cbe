// SLOW (about a minute; needs the npm registry or its cache): examples/react-app installed from the packed
// packages, type-checked (strict), its component tests run in Node and in Chromium, built, and the built
// page driven in Chromium against the Prism mock, the server's sandbox and its own service worker.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters as plain } from 'node:util';
import { createClient, readKeyFile, unwrap } from '@svc/client/node';
import { startPrism } from '@svc/contract-tests/prism';
import { spawnServer } from '@svc/tools/server-process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installApp, launch, serve, sh } from './harness.js';

let app: string;
let site: Awaited<ReturnType<typeof serve>>;
let browser: Browser;

beforeAll(async () => {
  app = await installApp();
  await sh(app, 'npx', ['vite', 'build']);
  site = await serve(join(app, 'dist'));
  browser = await launch();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  if (app) rmSync(app, { recursive: true, force: true });
});

/** The counts of a vitest run's closing line. */
function tally(output: string) {
  const text = plain(output);
  return { passed: Number(/Tests\s+(\d+) passed/.exec(text)?.[1] ?? 0), failed: /\d+ failed/.test(text) };
}

/** Opens the built page with `query`, in a viewport small enough that the list must be scrolled. */
async function open(query: Record<string, string>): Promise<{ page: Page; cursors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 900, height: 400 } });
  const errors: string[] = [];
  const cursors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => {
    const cursor = new URL(request.url()).searchParams.get('cursor');
    if (cursor) cursors.push(cursor);
  });
  await page.goto(`${site.url}?${new URLSearchParams(query)}`);
  await page.waitForSelector('form[aria-label="create a computer"] button:not([disabled])', {
    timeout: 20_000,
  });
  expect(errors).toEqual([]);
  return { page, cursors };
}

/** Scrolls to the end of the list until every page is loaded; returns the names shown. */
async function scrollToEnd(page: Page): Promise<string[]> {
  for (let i = 0; i < 20; i += 1) {
    if ((await page.getAttribute('section[aria-label="computers"]', 'data-complete')) === 'true') break;
    await page.mouse.wheel(0, 2000);
    await page.waitForTimeout(150);
  }
  expect(await page.getAttribute('section[aria-label="computers"]', 'data-complete')).toBe('true');
  return page.$$eval('[data-testid="computer"]', (items) =>
    items.map((li) => (li as HTMLElement).dataset.name ?? ''),
  );
}

/** Creates a computer through the form; resolves with the state the page shows at the end. */
async function create(page: Page, name: string): Promise<void> {
  await page.fill('input[name="name"]', name);
  await page.click('button[type="submit"]');
}

describe('examples/react-app on the packed packages', () => {
  it('type-checks with strict TypeScript', async () => {
    await sh(app, 'npx', ['tsc', '-p', 'tsconfig.json']);
  }, 120_000);

  it('passes its component tests in Node, on the MSW handlers', async () => {
    const { stdout } = await sh(app, 'npx', ['vitest', 'run', '--project', 'node']);
    // Not vitest's own "Tests N passed (N)" wording: tools/test.mjs adds those lines up.
    console.log(`examples/react-app, project node: ${tally(stdout).passed} component tests passed`);
    expect(tally(stdout)).toEqual({ passed: 4, failed: false });
  }, 120_000);

  it('passes the same tests in Chromium, on the MSW service worker', async () => {
    const { stdout } = await sh(app, 'npx', ['vitest', 'run', '--project', 'browser']);
    console.log(`examples/react-app, project browser: ${tally(stdout).passed} component tests passed`);
    expect(tally(stdout)).toEqual({ passed: 4, failed: false });
  }, 120_000);

  it('builds, with MSW and the spec document only in the chunks of ?mock', () => {
    const assets = join(app, 'dist', 'assets');
    const entry = readFileSync(join(app, 'dist', 'index.html'), 'utf8').match(
      /assets\/(index-[^"]+\.js)/,
    )?.[1];
    const main = readFileSync(join(assets, entry!), 'utf8');
    expect(main).not.toMatch(/mockServiceWorker|x-extensible-enum/);
    expect(
      readdirSync(assets).some((f) => readFileSync(join(assets, f), 'utf8').includes('x-extensible-enum')),
    ).toBe(true);
  });

  it('runs against the Prism mock: the list, a create that ends running, a 409 chosen with Prefer', async () => {
    const prism = await startPrism();
    try {
      const settings = { api: prism.baseUrl, token: 'any', workspace: 'acme-dev', limit: '1' };
      const { page } = await open(settings);
      expect(await scrollToEnd(page)).toEqual(['test-db-1', 'build-runner-1']); // the example page
      await create(page, 'box-1');
      await page.waitForSelector('[data-testid="created"][data-state="running"]', { timeout: 20_000 });
      await page.close();
      const failing = await open({ ...settings, prefer: 'code=409' });
      await create(failing.page, 'box-1');
      const error = await failing.page.waitForSelector('[data-testid="error"]');
      expect(await error.evaluate((e) => ({ ...(e as HTMLElement).dataset }))).toEqual({
        testid: 'error',
        status: '409',
        code: 'already_exists',
      });
      await failing.page.close();
    } finally {
      await prism.stop();
    }
  }, 90_000);

  it('runs against the server’s sandbox: infinite scroll, creating → running, a typed 409, delete', async () => {
    const server = await spawnServer({ env: { SVC_SIM_STEP_MS: '50' } });
    try {
      const keyFile = await readKeyFile(server.keyFilePath);
      const client = createClient({ keyFile, baseUrl: server.baseUrl });
      const token = (await client.accessToken()) ?? '';
      // The bootstrap service account's workspace, `default`, starts empty: three computers to page through.
      for (const name of ['web-1', 'web-2', 'web-3'])
        await unwrap(
          client.POST('/workspaces/{workspace}/computers', {
            params: { path: { workspace: 'default' } },
            body: { name, size: 'small', image: 'debian-13' },
          }),
        );
      const { page, cursors } = await open({ api: server.baseUrl, token, workspace: 'default', limit: '1' });
      expect(await scrollToEnd(page)).toEqual(['web-3', 'web-2', 'web-1']);
      expect(cursors.length).toBeGreaterThanOrEqual(2); // one page per computer, each after a scroll
      await create(page, 'box-1');
      await page.waitForSelector('[data-testid="created"][data-state="running"]', { timeout: 30_000 });
      expect(await page.textContent('[data-testid="created"]')).toContain('box-1: running');
      await page.waitForSelector('[data-testid="computer"][data-name="box-1"]');
      await create(page, 'web-1');
      const error = await page.waitForSelector('[data-testid="error"]');
      expect(await error.getAttribute('data-status')).toBe('409');
      expect(await error.textContent()).toMatch(/^Conflict: a computer named web-1 already exists/);
      await page.click('button[aria-label="delete box-1"]');
      await page.waitForSelector('[data-testid="computer"][data-name="box-1"]', {
        state: 'detached',
        timeout: 30_000,
      });
      await page.close();
    } finally {
      await server.close();
    }
  }, 120_000);

  it('runs on its own service worker (?mock): the stateful mock, create → running → delete', async () => {
    const { page, cursors } = await open({ mock: '', step: '100', workspace: 'acme-dev', limit: '1' });
    expect(await scrollToEnd(page)).toEqual(['test-db-1', 'build-runner-1']);
    expect(cursors).toHaveLength(1);
    await create(page, 'box-1');
    await page.waitForSelector('[data-testid="created"][data-state="running"]', { timeout: 20_000 });
    await page.click('button[aria-label="delete box-1"]');
    await page.waitForSelector('[data-testid="computer"][data-name="box-1"]', {
      state: 'detached',
      timeout: 20_000,
    });
    await page.close();
  }, 60_000);
});
