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
// the item schema's `oneOf` branches.
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
    `${JSON.stringify(withStreamEvents(JSON.parse(readFileSync(bundle, 'utf8'))), null, 2)}\n`,
  );
  mkdirSync(dirname(resolve(values.out)), { recursive: true });
  // From the working directory, so Redocly reads its redocly.yaml (the page's Redoc settings).
  const run = runRedocly(['build-docs', pageDoc, '--inlineBundle', '-o', values.out], { cwd: process.cwd() });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  process.exit(run.status);
}
