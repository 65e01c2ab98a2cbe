// examples/react-app as a team would have it: outside the workspace, with the packed @svc/contract,
// @svc/client and @svc/react installed by npm from their tarballs, in a temp dir; then its built page
// served on a free port and opened in Debian's Chromium.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CHROMIUM_PATH } from '@svc/tools/browser';
import { type Browser, chromium } from 'playwright-core';

const run = promisify(execFile);
export const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const APP_SOURCE = join(REPO, 'examples', 'react-app');

/** The flags of every Chromium here: headless, as root, and no traffic of its own. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches Chromium; Playwright gives each launch a fresh temporary profile (`--user-data-dir`). */
export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
}

/** Runs a command in `cwd`; its output is kept for the failure message. */
export async function sh(cwd: string, command: string, args: string[], timeout = 180_000) {
  try {
    return await run(command, args, {
      cwd,
      timeout,
      maxBuffer: 32 * 1024 * 1024,
      env: { ...process.env, CI: 'true' },
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** Copies the app to a temp dir, packs the three packages into its vendor/ and installs it with npm. */
export async function installApp(): Promise<string> {
  const app = mkdtempSync(join(tmpdir(), 'svc-react-app-'));
  cpSync(APP_SOURCE, app, {
    recursive: true,
    filter: (source) =>
      !/[/\\](node_modules|dist|vendor)([/\\]|$)|mockServiceWorker\.js$/.test(
        source.slice(APP_SOURCE.length),
      ),
  });
  await sh(REPO, 'pnpm', [
    ...['--filter', '@svc/contract', '--filter', '@svc/client', '--filter', '@svc/react'],
    ...['pack', '--pack-destination', join(app, 'vendor')],
  ]);
  await sh(app, 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], 240_000);
  await sh(app, 'npx', ['msw', 'init', 'public', '--save=false']);
  return app;
}

/** Serves a built `dist/` on 127.0.0.1 and a free port, as a team's static host would. */
export async function serve(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const types: Record<string, string> = {
    '.html': 'text/html',
    '.js': 'text/javascript',
    '.css': 'text/css',
  };
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const file = join(dir, path === '/' ? 'index.html' : path.replace(/\.\.+/g, ''));
    try {
      const body = readFileSync(file);
      response
        .writeHead(200, { 'Content-Type': types[extname(file)] ?? 'application/octet-stream' })
        .end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
