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
//
// Redoc renders a byte body (`type: string, format: binary`, rules/lib/bytes.js) as a bare `string`:
// neither that it is raw bytes rather than JSON, nor an upload's limit (`x-svc-max-bytes`, an extension
// Redoc does not show). So each byte operation's description ends with a "Bytes" section too (the media
// type, that it is raw bytes, the limit and what answers above it, a download's headers), the byte
// schema says the same in its description, and its payload sample is a line saying what the bytes are.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { byteBodies } from '../spec/rules/lib/bytes.js';
import { streamEventsOf } from '../spec/rules/lib/streams.js';
import { moveIntoPlace, temporaryName, writeFileAtomicSync } from './atomic-file.mjs';
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

/** The node a local `$ref` (`#/components/…`) points at. */
function resolveLocal(doc, ref) {
  return ref
    .slice(2)
    .split('/')
    .reduce((at, key) => at?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

/** `1073741824` as `1 GiB (1,073,741,824 bytes)`. */
export function formatBytes(bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let unit = 0;
  let value = bytes;
  while (value >= 1024 && value % 1024 === 0 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  return unit === 0 ? exact : `${value} ${units[unit]} (${exact})`;
}

/**
 * The document the page is built from, its byte bodies spelled out (rules/lib/bytes.js): a "Bytes"
 * section at the end of each byte operation's description, and each byte schema described and given a
 * payload sample saying what the bytes are. Pure; `doc` is left as it is.
 *
 * @param {Record<string, any>} doc a bundled OpenAPI 3.1 document
 * @returns {Record<string, any>}
 * @example
 * const page = withByteBodies(withStreamEvents(bundle));
 */
export function withByteBodies(doc) {
  const out = structuredClone(doc);
  const lines = new Map();
  for (const body of byteBodies(out)) {
    const operation = out.paths[body.path][body.method];
    const request = body.headers === undefined;
    const limit = body.maxBytes === undefined ? undefined : formatBytes(body.maxBytes);
    const what = request
      ? `**Request body**: \`${body.mediaType}\`, the raw bytes (not JSON)${limit ? `, at most ${limit}; more is \`413 payload_too_large\`, and another \`Content-Type\` is \`415 unsupported_media_type\`` : ''}.`
      : `**Response ${body.at[4]}**: \`${body.mediaType}\`, the raw bytes (not JSON)${
          body.headers.some((h) => /^(content-length|etag)$/i.test(h))
            ? `, with ${body.headers
                .filter((h) => /^(content-length|etag)$/i.test(h))
                .map((h) => `\`${h}\``)
                .join(' and ')}`
            : ''
        }. Errors are JSON, as everywhere.`;
    lines.set(operation, [...(lines.get(operation) ?? []), what]);
    const media = out.paths[body.path][body.method];
    const holder = request ? media.requestBody : media.responses[body.at[4]];
    const content = holder.content[body.mediaType];
    const sample = `<raw bytes: ${body.mediaType}${limit ? `, at most ${limit}` : ''}>`;
    content.schema = {
      ...content.schema,
      description: [
        content.schema?.description,
        `Raw bytes (${body.mediaType}), not JSON${limit ? `; at most ${limit}` : ''}.`,
      ]
        .filter(Boolean)
        .join(' '),
    };
    // Redoc shows a media type's `examples` (a tar's has no value: binary, described instead) or else
    // its `example`: the sample line stands in wherever no value is.
    // An example that is text (a CSV file) is shown as it is; one that is not (a tar archive: NUL
    // padding) is named by its length instead, its description saying what it holds.
    const examples = Object.values(content.examples ?? {}).map((raw) =>
      typeof raw?.$ref === 'string' ? resolveLocal(out, raw.$ref) : raw,
    );
    for (const example of examples)
      if (typeof example?.value === 'string' && [...example.value].some((c) => c.charCodeAt(0) < 9))
        example.value = `<raw bytes: ${body.mediaType}, ${formatBytes(Buffer.byteLength(example.value))}>`;
    if (examples.length === 0) content.example = sample;
  }
  for (const [operation, what] of lines)
    operation.description = [(operation.description ?? '').trimEnd(), '', '### Bytes', '', ...what, ''].join(
      '\n',
    );
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
  const out = resolve(values.out);
  const pageDoc = join(dirname(bundle), 'openapi.docs.json');
  // Both files are renamed into place (atomic-file.mjs): a page being served, or a build running beside
  // this one, never reads half of either.
  writeFileAtomicSync(
    pageDoc,
    `${JSON.stringify(withWebhookTypes(withByteBodies(withStreamEvents(JSON.parse(readFileSync(bundle, 'utf8'))))), null, 2)}\n`,
  );
  mkdirSync(dirname(out), { recursive: true });
  const staged = temporaryName(out);
  // From the working directory, so Redocly reads its redocly.yaml (the page's Redoc settings).
  const run = runRedocly(['build-docs', pageDoc, '--inlineBundle', '-o', staged], { cwd: process.cwd() });
  process.stdout.write(run.stdout.replaceAll(staged, out));
  process.stderr.write(run.stderr.replaceAll(staged, out));
  if (run.status === 0) moveIntoPlace(staged, out);
  else rmSync(staged, { force: true });
  process.exit(run.status);
}
