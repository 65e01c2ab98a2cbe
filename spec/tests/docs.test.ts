// The rendered reference docs (dist/docs/index.html, from `pnpm spec:docs`) show every operation
// of the bundle, offline, in the Chromium that Debian ships. No browser is ever downloaded.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '@svc/tools/browser';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bundlePath = fileURLToPath(new URL('../dist/openapi.json', import.meta.url));
const pagePath = fileURLToPath(new URL('../dist/docs/index.html', import.meta.url));

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
// Requests that would make the page depend on a server to render. The Redoc attribution logo
// (an <img> from cdn.redoc.ly, hidden when it fails) is cosmetic and not counted.
const RENDER_BLOCKING = new Set(['document', 'script', 'stylesheet', 'fetch', 'xhr', 'font']);

type Operation = { name: string; summary: string | undefined };

// biome-ignore lint/suspicious/noExplicitAny: the bundle is walked as plain JSON
type Json = any;

/**
 * Each stream operation's events, read from the bundle apart from the docs build: the operation's
 * summary, and per `oneOf` branch of its item schema the event names and their data schema's name.
 */
function streamsOf(bundle: Json): { summary: string; events: { names: string[]; data: string }[] }[] {
  const schema = (ref: string) => bundle.components.schemas[ref.split('/').pop() ?? ''];
  const streams = [];
  for (const item of Object.values(bundle.paths ?? {}) as Json[]) {
    const media = item.get?.responses?.['200']?.content?.['text/event-stream'];
    if (!media) continue;
    const events = (schema(media.schema.items.$ref).oneOf as Json[]).map((branch) => ({
      names: branch.properties.event.enum ?? [branch.properties.event.const],
      data: String(branch.properties.data.contentSchema.$ref).split('/').pop() ?? '',
    }));
    streams.push({ summary: item.get.summary, events });
  }
  return streams;
}

/**
 * Each byte body, read from the bundle apart from the docs build (rules/lib/bytes.js is what the build
 * reads): its operation's summary, its media type, and an upload's limit in bytes.
 */
function byteBodiesOf(bundle: Json): { summary: string; mediaType: string; maxBytes?: number }[] {
  const bodies = [];
  const BYTES = ['application/octet-stream', 'application/x-tar'];
  const local = (node: Json) =>
    node?.$ref ? bundle.components.responses[String(node.$ref).split('/').pop() ?? ''] : node;
  for (const item of Object.values(bundle.paths ?? {}) as Json[])
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      for (const holder of [op.requestBody, local(op.responses?.['200'])]) {
        const mediaType = Object.keys(holder?.content ?? {}).find((type) => BYTES.includes(type));
        if (mediaType === undefined) continue;
        bodies.push({
          summary: op.summary,
          mediaType,
          maxBytes: holder.content[mediaType].schema['x-svc-max-bytes'],
        });
      }
    }
  return bodies;
}

function operationsOf(bundle: { paths?: object; webhooks?: object }): Operation[] {
  const operations: Operation[] = [];
  for (const group of [bundle.paths, bundle.webhooks]) {
    for (const [path, item] of Object.entries(group ?? {})) {
      for (const method of METHODS) {
        const operation = (item as Record<string, { operationId?: string; summary?: string }>)[method];
        if (!operation) continue;
        operations.push({
          name: `${method.toUpperCase()} ${path} (${operation.operationId})`,
          summary: operation.summary,
        });
      }
    }
  }
  return operations;
}

/** Text of one `[data-section-id]` section once Redoc has mounted it (sections mount as they scroll into view). */
async function sectionText(page: Page, id: string): Promise<string> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const text = await page.evaluate((wanted) => {
      const sections = document.querySelectorAll('#redoc main [data-section-id]');
      const section = [...sections].find((element) => element.getAttribute('data-section-id') === wanted);
      section?.scrollIntoView();
      return section?.textContent ?? '';
    }, id);
    if (text) return text;
    await page.waitForTimeout(50);
  }
  return '';
}

/**
 * Everything Redoc renders, section by section. Redoc 3 mounts sections lazily and shows a tag's
 * operations only once one of them is routed to (`#/<tag>/<operation>`), so this mounts every
 * section, then routes to every operation linked from the tag pages.
 */
async function renderAll(page: Page): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const sectionIds = await page.evaluate(() =>
    [...document.querySelectorAll('#redoc main [data-section-id]')].map(
      (e) => e.getAttribute('data-section-id') ?? '',
    ),
  );
  for (const id of new Set(sectionIds)) texts.set(id, await sectionText(page, id));
  // A tag page links its first 8 operations and hides the rest behind "Show N more...": open them.
  await page.evaluate(() => {
    for (const element of document.querySelectorAll<HTMLElement>('#redoc main *'))
      if (element.children.length === 0 && /^Show \d+ more/.test(element.textContent?.trim() ?? ''))
        element.click();
  });
  const routes = await page.evaluate(() =>
    [...document.querySelectorAll('#redoc main a[href^="#/"]')]
      .map((a) => a.getAttribute('href')?.slice(1) ?? '')
      .filter((route) => !route.includes('#')),
  );
  for (const route of new Set(routes)) {
    if (texts.get(route)) continue;
    await page.evaluate((hash) => {
      location.hash = hash;
    }, `#${route}`);
    texts.set(route, await sectionText(page, route));
  }
  return texts;
}

/**
 * Each webhook of the bundle: its name (an event type), the headers it declares and the required
 * properties of its payload schema, read from the bundle apart from the docs build.
 */
function webhooksOf(bundle: Json): { name: string; headers: string[]; fields: string[] }[] {
  const ref = (node: Json, kind: string) =>
    node?.$ref ? bundle.components[kind][String(node.$ref).split('/').pop() ?? ''] : node;
  return Object.entries(bundle.webhooks ?? {}).map(([name, item]) => {
    const post = (item as Json).post;
    const schema = ref(post.requestBody.content['application/json'].schema, 'schemas');
    return {
      name,
      headers: (post.parameters as Json[]).map((p) => ref(p, 'parameters').name),
      fields: schema.required ?? [],
    };
  });
}

/** The "## Webhooks" section of the info description, as plain text (what Redoc renders of its Markdown). */
function webhooksIntro(bundle: Json): string {
  const section = String(bundle.info.description)
    .split(/^## /m)
    .find((s) => s.startsWith('Webhooks\n'));
  return (section ?? '').replace(/^Webhooks\n/, '').replace(/\*\*|`/g, '');
}

describe('reference docs page', { timeout: 60_000 }, () => {
  let browser: Browser;
  let page: Page;
  let operations: Operation[];
  let streams: ReturnType<typeof streamsOf>;
  let webhooks: ReturnType<typeof webhooksOf>;
  let intro = '';
  let sections = new Map<string, string>();
  let rendered = '';
  const external: string[] = [];

  beforeAll(async () => {
    if (!existsSync(pagePath)) {
      throw new Error(`${pagePath} is missing: run the docs task first (pnpm spec:docs)`);
    }
    if (!existsSync(bundlePath)) throw new Error(`${bundlePath} is missing: run the build task first`);
    operations = operationsOf(JSON.parse(readFileSync(bundlePath, 'utf8')));
    streams = streamsOf(JSON.parse(readFileSync(bundlePath, 'utf8')));
    webhooks = webhooksOf(JSON.parse(readFileSync(bundlePath, 'utf8')));
    intro = webhooksIntro(JSON.parse(readFileSync(bundlePath, 'utf8')));

    browser = await launchChromium();
    page = await browser.newPage();
    // The page must render from the file alone: nothing leaves the machine.
    await page.route('**/*', (route) => {
      const request = route.request();
      if (/^(file|data|blob):/.test(request.url())) return route.continue();
      if (RENDER_BLOCKING.has(request.resourceType()))
        external.push(`${request.resourceType()} ${request.url()}`);
      return route.abort();
    });
    await page.goto(`file://${pagePath}`, { waitUntil: 'load' });
    // Redoc prerenders only the sidebar; the rest appears once its (inlined) script runs.
    await page
      .waitForSelector('#redoc main [data-section-id]', { timeout: 15_000 })
      .then(async () => {
        sections = await renderAll(page);
        rendered = [...sections.values()].join('\n');
      })
      .catch(() => undefined);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('is built from a bundle with operations, each with a summary', () => {
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.filter((operation) => !operation.summary).map((operation) => operation.name)).toEqual(
      [],
    );
  });

  it("renders every operation's summary in the page", () => {
    const squash = (text: string) => text.replace(/\s+/g, ' ');
    const text = squash(rendered);
    const missing = operations.filter((operation) => !text.includes(squash(operation.summary ?? '\0')));
    expect(missing.map((operation) => `${operation.name}: "${operation.summary}"`)).toEqual([]);
  });

  it("shows each stream operation's events: every name, with the schema of its data", () => {
    expect(streams.length).toBeGreaterThan(0);
    const squash = (text: string) => text.replace(/\s+/g, ' ');
    // The section of the page that holds the operation: from its summary to the next "Events" table's end.
    const missing = streams.flatMap(({ summary, events }) => {
      const section = squash(rendered).split(squash(summary)).slice(1).join(' ');
      const table = section.slice(section.indexOf('Events'));
      return events.flatMap(({ names, data }) =>
        [...names, data].filter((text) => !table.includes(text)).map((text) => `${summary}: ${text}`),
      );
    });
    expect(missing).toEqual([]);
  });

  it("shows each byte body as raw bytes of its media type, with an upload's limit in bytes", () => {
    const bodies = byteBodiesOf(JSON.parse(readFileSync(bundlePath, 'utf8')));
    expect(bodies.length).toBeGreaterThan(0);
    const squash = (text: string) => text.replace(/\s+/g, ' ');
    const missing = bodies.flatMap(({ summary, mediaType, maxBytes }) => {
      const section = squash(rendered).split(squash(summary)).slice(1).join(' ');
      const bytes = section.slice(section.indexOf('Bytes'), section.indexOf('Security'));
      const wanted = [`${mediaType}, the raw bytes (not JSON)`];
      if (maxBytes !== undefined) wanted.push(`${maxBytes.toLocaleString('en-US')} bytes`, '413', '415');
      return wanted.filter((text) => !bytes.includes(text)).map((text) => `${summary}: ${text}`);
    });
    expect(missing).toEqual([]);
  });

  it('shows the "Webhooks" section of the introduction: signing, verification, retries, dedup', () => {
    const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
    expect(intro).toMatch(/webhook-signature[\s\S]*5 minutes[\s\S]*webhook-id/);
    expect(squash(rendered)).toContain(squash(intro));
  });

  it("shows every webhook as a webhook (Redoc's badge), with its headers, its payload's fields and a sample of its own type", () => {
    expect(webhooks.length).toBeGreaterThan(0);
    const texts = [...sections.values()];
    const missing = webhooks.flatMap(({ name, headers, fields }) => {
      const section = texts.find((text) => text.startsWith(`${name}Webhook`));
      if (section === undefined) return [`${name}: no section`];
      // Its payload sample names its own event type (tools/spec-docs.mjs narrows the shared schema).
      const sample = section.includes(`"type": "${name}"`) ? [] : [`${name}: the sample's type`];
      return [...headers, ...fields]
        .filter((text) => !section.includes(text))
        .map((text) => `${name}: ${text}`)
        .concat(sample);
    });
    expect(missing).toEqual([]);
  });

  it('loads no script, style or data from the network (build with --inlineBundle)', () => {
    expect(external).toEqual([]);
  });
});
