// Loads the page in headless Chromium (Debian's, never a downloaded one) against a Prism mock of its own.
import { listOperations, loadDocument } from '@svc/contract';
import { type PrismMock, startPrism } from '@svc/contract-tests/prism';
import { launchChromium } from '@svc/tools/browser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer } from '../server.mjs';

let prism: PrismMock;
let page: { url: string; close: () => Promise<void> };
let browser: Browser;

beforeAll(async () => {
  [prism, page] = await Promise.all([startPrism(), startServer(0)]);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await page?.close();
  await prism?.stop();
});

/** Names of the computers in the first example of listComputers' 200: what Prism answers by default. */
function exampleNames(): string[] {
  const op = listOperations(loadDocument()).find((o) => o.operationId === 'listComputers')!;
  const content = (
    op.operation.responses as Record<
      string,
      { content: Record<string, { examples: Record<string, { value: { computers: { name: string }[] } }> }> }
    >
  )['200']!.content['application/json']!;
  return Object.values(content.examples)[0]!.value.computers.map((c) => c.name);
}

it('lists the mock computers of a workspace through the client browser build', async () => {
  const tab = await browser.newPage();
  const failures: string[] = [];
  tab.on('pageerror', (error) => failures.push(error.message));
  tab.on('requestfailed', (request) => failures.push(`${request.url()} ${request.failure()?.errorText}`));
  await tab.goto(`${page.url}/?api=${encodeURIComponent(prism.baseUrl)}&workspace=acme-dev`);
  await tab.waitForFunction(() => document.getElementById('status')?.textContent !== 'Loading…');
  const names = await tab.$$eval('#computers li', (items) =>
    items.map((li) => (li as HTMLElement).dataset.name),
  );
  const status = await tab.textContent('#status');
  expect(failures).toEqual([]);
  expect(names, status ?? '').toEqual(exampleNames());
  expect(status).toBe(`${names.length} computer(s)`);
});
