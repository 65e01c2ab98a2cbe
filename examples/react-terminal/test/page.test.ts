// The terminal page in headless Chromium (Debian's, never a downloaded one): xterm.js bound to
// useTerminal against the kit's simulated terminals. Typing `echo hi` and Enter shows `hi` on the
// next row; `exit 3` closes it with exit code 3.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launchChromium } from '@svc/tools/browser';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

let server: Server;
let url: string;
let browser: Browser;

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['build.mjs'], { cwd: ROOT });
  server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const file = join(ROOT, 'dist', path === '/' ? 'index.html' : path.replace(/\.\.+/g, ''));
    try {
      const body = await readFile(file);
      response
        .writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' })
        .end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/** The rows xterm.js shows, as text, trailing spaces trimmed. */
const rows = (page: Page) =>
  page.$$eval('.xterm-rows > div', (divs) => divs.map((div) => (div.textContent ?? '').replace(/\s+$/, '')));

it('types echo hi into xterm.js and sees hi; exit 3 ends it with exit code 3', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  await page.waitForSelector('[data-status="open"]', { timeout: 20_000 });
  await page.waitForFunction(() => document.querySelector('.xterm-rows')?.textContent?.startsWith('$'));
  await page.click('.xterm');
  await page.keyboard.type('echo hi');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() =>
    [...document.querySelectorAll('.xterm-rows > div')].some((div) => div.textContent?.trim() === 'hi'),
  );
  expect((await rows(page)).slice(0, 3)).toEqual(['$ echo hi', 'hi', '$']);
  await page.keyboard.type('exit 3');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-status="closed"]', { timeout: 10_000 });
  expect(await page.getAttribute('[role="status"]', 'data-exit-code')).toBe('3');
  expect(errors).toEqual([]);
  await page.close();
});
