#!/usr/bin/env node
// `pnpm spec:docs`: the reference page, built by Redoc from the bundle plus what Redoc cannot show.
//
//   node tools/spec-docs.mjs [--bundle dist/openapi.json] [--out dist/docs/index.html]   (in spec/)
//
// Redoc renders a stream operation's `text/event-stream` response as its schema, an array of the item
// schema, but not `data.contentSchema`, which says what each event's data is: a reader would see
// `data: string` and no event's fields. So the page is built from a copy of the bundle (never the
// hand-written spec, nor the bundle packages read) in which each stream operation's description ends
// with an "Events" section, a table of its event names and the schema of their data, generated from
// the item schema's `oneOf` branches. And each webhook's payload is narrowed to its own event type
// (`withWebhookTypes`), so the sample Redoc generates for it names that type.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { streamEventsOf } from '../spec/rules/lib/streams.js';
import { runRedocly } from './redocly.mjs';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The document the page is built from: `doc` with an "Events" section at the end of each stream
 * operation's description. Pure; `doc` is left as it is.
 *
 * @param {Record<string, any>} doc a bundled OpenAPI 3.1 document
 * @returns {Record<string, any>}
 * @example
 * const page = withStreamEvents(JSON.parse(readFileSync('dist/openapi.json', 'utf8')));
 */
export function withStreamEvents(doc) {
  const out = structuredClone(doc);
  for (const item of Object.values(out.paths ?? {}))
    for (const method of METHODS) {
      const operation = item?.[method];
      const stream = method === 'get' ? streamEventsOf(out, operation) : undefined;
      if (stream === undefined) continue;
      const rows = stream.events.map(
        ({ names, dataSchema }) => `| ${names.map((n) => `\`${n}\``).join(', ')} | \`${dataSchema}\` |`,
      );
      operation.description = [
        (operation.description ?? '').trimEnd(),
        '',
        '### Events',
        '',
        `Each event of the stream (\`${stream.itemSchema}\`) has an \`event\` name, an \`id\` and \`data\`, one JSON object of the schema its name gives:`,
        '',
        '| event | data |',
        '| --- | --- |',
        ...rows,
        '',
      ].join('\n');
    }
  return out;
}

/**
 * The document the page is built from, for webhooks: each webhook's payload narrowed to its own event
 * type. The payload schemas are the stream's, shared by every event of a resource (`ComputerEvent` is
 * `computer.created`, `.updated` and `.deleted`), so the sample Redoc generates showed the enum's first
 * type (`workspace.updated`) on every webhook. In the copy, a webhook whose payload has a `type` property
 * gets `allOf: [<payload>, {properties: {type: {const: <its name>}}}]`: true of every delivery it sends.
 * Pure; `doc` is left as it is.
 *
 * @param {Record<string, any>} doc a bundled OpenAPI 3.1 document
 * @returns {Record<string, any>}
 * @example
 * const page = withWebhookTypes(JSON.parse(readFileSync('dist/openapi.json', 'utf8')));
 */
export function withWebhookTypes(doc) {
  const out = structuredClone(doc);
  const schemas = out.components?.schemas ?? {};
  for (const [name, item] of Object.entries(out.webhooks ?? {})) {
    const media = item?.post?.requestBody?.content?.['application/json'];
    const ref = media?.schema?.$ref;
    const payload = typeof ref === 'string' ? schemas[ref.replace('#/components/schemas/', '')] : undefined;
    if (payload?.properties?.type === undefined) continue;
    media.schema = { allOf: [{ $ref: ref }, { properties: { type: { const: name } } }] };
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      bundle: { type: 'string', default: 'dist/openapi.json' },
      out: { type: 'string', default: 'dist/docs/index.html' },
    },
  });
  const bundle = resolve(values.bundle);
  const pageDoc = join(dirname(bundle), 'openapi.docs.json');
  writeFileSync(
    pageDoc,
    `${JSON.stringify(withWebhookTypes(withStreamEvents(JSON.parse(readFileSync(bundle, 'utf8')))), null, 2)}\n`,
  );
  mkdirSync(dirname(resolve(values.out)), { recursive: true });
  // From the working directory, so Redocly reads its redocly.yaml (the page's Redoc settings).
  const run = runRedocly(['build-docs', pageDoc, '--inlineBundle', '-o', values.out], { cwd: process.cwd() });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  process.exit(run.status);
}
