// SLOW (about a minute, needs the npm registry): @svc/contract and @svc/client as an app outside the
// repository gets them. `pnpm pack` both, install the tarballs with npm into a fresh Vite + TypeScript
// (strict) app in a temp dir, type-check it, build it, and run the built page in Chromium against the
// Prism mock and against the built server. Runs in this package's default `test` task only.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createClient, readKeyFile } from '@svc/client/node';
import { launchChromium } from '@svc/tools/browser';
import { spawnServer } from '@svc/tools/server-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrism } from '../../src/prism.js';

const run = promisify(execFile);
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const repo = here('../../../../');

/** What the app installs from the registry, pinned: Vite 7 and the workspace catalog's TypeScript. */
const VITE_VERSION = '7.3.8';
const TYPESCRIPT_VERSION = /\n\s*typescript: (\S+)/.exec(
  readFileSync(join(repo, 'pnpm-workspace.yaml'), 'utf8'),
)![1]!;

let app: string;
let tarballs: string[];

/** Serves the app's built `dist/` on a free port (a stand-in for the team's static host). */
async function serveDist(dir: string): Promise<{ url: string; server: Server }> {
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript' };
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const file = join(dir, path === '/' ? 'index.html' : path.replace(/\.\.+/g, ''));
    try {
      const body = readFileSync(file);
      response.writeHead(200, { 'Content-Type': types[extname(file)] ?? 'application/octet-stream' });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}/`, server };
}

/** Opens the built page with `?api=…&token=…` and returns what it printed. */
async function runPage(api: string, token: string): Promise<Record<string, unknown>> {
  const { url, server } = await serveDist(join(app, 'dist'));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${url}?${new URLSearchParams({ api, token })}`);
    await page.waitForSelector('#out[data-done]', { timeout: 20_000 });
    expect(errors).toEqual([]);
    return JSON.parse((await page.textContent('#out')) ?? 'null');
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

beforeAll(async () => {
  app = mkdtempSync(join(tmpdir(), 'svc-app-'));
  cpSync(here('app'), app, { recursive: true });
  const vendor = join(app, 'vendor');
  // The README's commands: pack both packages, then install the tarballs with npm.
  await run(
    'pnpm',
    ['--filter', '@svc/contract', '--filter', '@svc/client', 'pack', '--pack-destination', vendor],
    {
      cwd: repo,
    },
  );
  tarballs = readdirSync(vendor).sort();
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'svc-app', private: true, type: 'module' }, null, 2)}\n`,
  );
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      ...tarballs.map((t) => `./vendor/${t}`),
      `vite@${VITE_VERSION}`,
      `typescript@${TYPESCRIPT_VERSION}`,
    ],
    { cwd: app, timeout: 240_000 },
  );
}, 300_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('the packed packages in an app outside the workspace', () => {
  it('pack to tarballs whose manifests have no workspace: or catalog: ranges', () => {
    const version = (name: string) =>
      JSON.parse(readFileSync(join(repo, 'packages', name, 'package.json'), 'utf8')).version;
    expect(tarballs).toEqual([
      `svc-client-${version('client')}.tgz`,
      `svc-contract-${version('contract')}.tgz`,
    ]);
    for (const name of ['client', 'contract']) {
      const manifest = readFileSync(join(app, 'node_modules', '@svc', name, 'package.json'), 'utf8');
      expect(manifest).not.toMatch(/workspace:|catalog:/);
      expect(JSON.parse(manifest).private).toBeUndefined();
      expect(readdirSync(join(app, 'node_modules', '@svc', name))).toContain('README.md');
    }
  });

  it('type-checks (strict) and builds with Vite', async () => {
    await run('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: app });
    await run('npx', ['vite', 'build'], { cwd: app });
    const js = readdirSync(join(app, 'dist', 'assets')).filter((f) => f.endsWith('.js'));
    expect(js).toHaveLength(1);
    // The browser entry only: key-file auth (jose) stays in @svc/client/node.
    expect(readFileSync(join(app, 'dist', 'assets', js[0]!), 'utf8')).not.toMatch(/SignJWT|jwt-bearer/);
  }, 120_000);

  it('runs in Chromium against the Prism mock', async () => {
    const prism = await startPrism();
    try {
      const result = await runPage(prism.baseUrl, 'any-token');
      expect(result).toMatchObject({ ok: true });
      expect(result.workspaces).toBeGreaterThan(0);
    } finally {
      await prism.stop();
    }
  }, 60_000);

  it('runs in Chromium against the built server', async () => {
    const server = await spawnServer();
    try {
      const keyFile = await readKeyFile(server.keyFilePath);
      const token = await createClient({ keyFile, baseUrl: server.baseUrl }).accessToken();
      const result = await runPage(server.baseUrl, token ?? '');
      expect(result).toMatchObject({ ok: true, principal: keyFile.principal_id });
      // A token the server does not accept gives the error envelope's code, not a crash.
      expect(await runPage(server.baseUrl, 'forged')).toEqual({ ok: false, code: 'unauthenticated' });
    } finally {
      await server.close();
    }
  }, 90_000);
});
