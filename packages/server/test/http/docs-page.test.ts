// The API reference at /docs (and / pointing there), as the built server serves it from dist/, named by
// its start banner; and the handler's answers where the page is missing.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, stopChild } from '@svc/tools/child-process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDocsPage, DOCS_PAGE } from '../../src/http/docs-page.js';

const MAIN = new URL('../../dist/main.js', import.meta.url);
const built = existsSync(MAIN) && existsSync(DOCS_PAGE);
if (!built && process.env.CI) throw new Error('/docs cannot be tested under CI: build the server first');

describe.skipIf(!built)('the built svc-server serves its API reference', () => {
  let origin = '';
  let banner = '';
  let dir = '';
  let child: ReturnType<typeof spawn>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-docs-'));
    child = spawn(process.execPath, [MAIN.pathname, '--sandbox'], {
      env: childEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SVC_BOOTSTRAP_KEY_FILE: join(dir, 'key.json'),
        LOG_LEVEL: 'silent',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    banner = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`no banner in 150 s:\n${output}`)), 150_000);
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/\n {2}docs: .*\n/.test(output)) {
          clearTimeout(timer);
          resolve(output);
        }
      });
    });
    origin = /listening on (http:\S+)/.exec(banner)?.[1] ?? '';
  }, 180_000);
  afterAll(async () => {
    if (child) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the start banner names the docs URL', () => {
    expect(banner).toContain(`  docs:      ${origin}/docs (the API reference)\n`);
  });

  test('GET / points to /docs', async () => {
    const answer = await fetch(`${origin}/`, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/docs');
    expect(await answer.text()).toContain('href="/docs"');
  });

  test('GET /docs is the rendered page, whole, with nothing to fetch from elsewhere', async () => {
    const answer = await fetch(`${origin}/docs`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await answer.text();
    expect(html).toContain('<redoc'); // Redoc's mount, its script inlined (--inlineBundle)
    expect(html).toContain('Cloud Computer Service');
    // No script or stylesheet loaded from a URL: the page renders offline (spec/tests/docs.test.ts
    // renders it in Chromium with every request refused).
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
    expect(html).not.toMatch(/<link[^>]+rel="stylesheet"[^>]+href="https?:/);
  });

  test('the API keeps its own 404 beside them', async () => {
    const answer = await fetch(`${origin}/docs/nothing`);
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toContain('application/json');
  });
});

describe('createDocsPage', () => {
  const docs = createDocsPage(new URL('file:///nonexistent/docs/index.html'));

  test.each<[string, { method: string; path: string; status: number | undefined }]>([
    ['GET / redirects', { method: 'GET', path: '/', status: 302 }],
    ['HEAD / redirects', { method: 'HEAD', path: '/', status: 302 }],
    ['a missing page is 404 saying how to build it', { method: 'GET', path: '/docs', status: 404 }],
    ['POST /docs is not the page', { method: 'POST', path: '/docs', status: undefined }],
    ['another path is not the page', { method: 'GET', path: '/docsx', status: undefined }],
  ])('%s', async (_name, { method, path, status }) => {
    const answer = await docs(new Request(`http://127.0.0.1${path}`, { method }));
    expect(answer?.status).toBe(status);
    if (status === 404) expect(await answer?.text()).toContain('pnpm build');
  });
});
