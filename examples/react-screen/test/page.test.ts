// The live screen page in headless Chromium (Debian's, never a downloaded one): useScreen against the
// kit's simulated screen. The first frame is a real PNG the browser decodes; a click on the picture is
// sent as a click at the same place on the screen, and the next frame shows the pointer there.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launchChromium } from '@svc/tools/browser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript' };

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

it('shows the screen live: a decoded PNG, and a click on it moves the pointer there in the next frame', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${url}?width=640`);
  await page.waitForSelector('[data-status="live"]', { timeout: 20_000 });
  // The browser decoded the picture: 640×400 of a 1280×800 screen.
  await page.waitForFunction(
    () => (document.querySelector('#screen') as HTMLImageElement | null)?.naturalWidth === 640,
  );
  expect(await page.$eval('#screen', (img) => (img as HTMLImageElement).naturalHeight)).toBe(400);
  expect(await page.getAttribute('[role="status"]', 'data-cursor')).toBe('640,400');
  const first = Number(await page.getAttribute('[role="status"]', 'data-frame'));
  // Clicking 100,60 px into the picture is a click at 200,120 on the screen (twice the size).
  await page.click('#screen', { position: { x: 100, y: 60 } });
  await page.waitForSelector('[data-cursor="200,120"]', { timeout: 10_000 }).catch(async (error) => {
    throw new Error(`${error}: ${await page.textContent('[role="status"]')} ${errors.join('; ')}`);
  });
  expect(Number(await page.getAttribute('[role="status"]', 'data-frame'))).toBeGreaterThan(first);
  // The pointer is drawn where it is: the picture's pixel there is the pointer's white.
  const pixel = await page.$eval('#screen', (img) => {
    const canvas = document.createElement('canvas');
    canvas.width = (img as HTMLImageElement).naturalWidth;
    canvas.height = (img as HTMLImageElement).naturalHeight;
    const context = canvas.getContext('2d') as CanvasRenderingContext2D;
    context.drawImage(img as HTMLImageElement, 0, 0);
    return [...context.getImageData(101, 61, 1, 1).data];
  });
  expect(pixel).toEqual([255, 255, 255, 255]);
  expect(errors).toEqual([]);
  await page.close();
});
