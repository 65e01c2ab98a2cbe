// Generates src/generated/ from the bundled spec: the openapi-typescript types and a copy of the document.
// Nothing here is hand-edited. Turbo runs this as `@svc/contract#generate` after the spec bundle changes.
//
// Why the care about unchanged files: the TypeScript packages are hashed from schema.ts (turbo.json,
// `@svc/contract#build`), not from the bundle. The types are generated from the document's shape (prose
// removed, scripts/shape.mjs) and written only when their text changes, so a description edit leaves
// schema.ts as it was and every TypeScript build replays from cache. The document itself, descriptions
// included, is still copied on every change: the MCP tools and the CLI read their help text from it at
// run time, so a prose edit reaches them without recompiling anything.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { withoutProse } from './shape.mjs';

const require = createRequire(import.meta.url);
const bundle = require.resolve('@svc/spec/openapi.json');
const generated = new URL('../src/generated/', import.meta.url);
const distGenerated = new URL('../dist/generated/', import.meta.url);

/**
 * Writes `text` to `file` unless the file already holds exactly that text.
 *
 * @param {URL} file
 * @param {string} text
 * @returns {Promise<boolean>} whether the file was written
 */
async function writeIfChanged(file, text) {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === text) return false;
  await writeFile(file, text);
  return true;
}

/**
 * The type of an enum marked `x-extensible-enum: true`: its values, plus any other string, written
 * `'a' | 'b' | (string & {})` so editors still offer the known values (a bare `| string` would absorb
 * them). Undefined for every other schema, which openapi-typescript then types as usual.
 *
 * @param {typeof import('typescript')} ts
 * @param {{ 'x-extensible-enum'?: unknown, enum?: unknown[], type?: unknown }} schema
 */
function openEnum(ts, schema) {
  if (schema['x-extensible-enum'] !== true || !Array.isArray(schema.enum)) return undefined;
  const f = ts.factory;
  const known = schema.enum.map((value) => f.createLiteralTypeNode(f.createStringLiteral(String(value))));
  const other = f.createParenthesizedType(
    f.createIntersectionTypeNode([
      f.createKeywordTypeNode(ts.SyntaxKind.StringKeyword),
      f.createTypeLiteralNode([]),
    ]),
  );
  return f.createUnionTypeNode([...known, other]);
}

/**
 * The type of a byte body (`type: string, format: binary`, @svc/contract's bytes.ts), which
 * openapi-typescript types `string`: no client holds a file or a tar archive as a JS string (a string is
 * sent as its UTF-8, which is not the bytes of a binary file). A request body is what `fetch` sends as
 * bytes, `Blob | ReadableStream<Uint8Array> | Uint8Array | ArrayBuffer`; a response body is the
 * stream `fetch` answers, `ReadableStream<Uint8Array>` (how a client reads it, whole or streamed, is
 * the client's transport). Undefined for every other schema.
 *
 * @param {typeof import('typescript')} ts
 * @param {{ type?: unknown, format?: unknown }} schema
 * @param {string | undefined} path where the schema is, `#/paths/…/requestBody/content/<media type>`
 */
function byteBody(ts, schema, path) {
  if (schema.type !== 'string' || schema.format !== 'binary' || typeof path !== 'string') return undefined;
  const f = ts.factory;
  const bytes = () => f.createTypeReferenceNode('ReadableStream', [f.createTypeReferenceNode('Uint8Array')]);
  if (/\/requestBody\/content\/[^/]+$/.test(path))
    return f.createUnionTypeNode(
      ['Blob', 'Uint8Array', 'ArrayBuffer'].map((name) => f.createTypeReferenceNode(name)).concat(bytes()),
    );
  if (/\/responses\/[^/]+\/content\/[^/]+$/.test(path)) return bytes();
  return undefined;
}

/**
 * The security requirements of every operation (its own `security`, else the document's) as a type,
 * which openapi-typescript leaves out: `securityRequirements["getHealth"]` is `[]`. TypeScript code that
 * branches on who may call an operation (the server's handler context) reads it from here.
 *
 * @param {{ security?: unknown, paths?: Record<string, Record<string, { operationId?: string, security?: unknown }>> }} document
 */
function securityTypes(document) {
  const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
  const lines = [];
  for (const item of Object.values(document.paths ?? {}))
    for (const method of methods) {
      const operation = item[method];
      if (typeof operation?.operationId !== 'string') continue;
      // JSON of a requirement list is also its TypeScript type: a tuple of scheme → scopes records.
      const requirements = JSON.stringify(operation.security ?? document.security ?? []);
      lines.push(`    ${JSON.stringify(operation.operationId)}: ${requirements};`);
    }
  return `\n/** The security requirements of each operation, from the spec (\`[]\`: public). */\nexport interface securityRequirements {\n${lines.join('\n')}\n}\n`;
}

/**
 * What each operation declares beyond its HTTP shape (its `x-svc`: permission, action, transaction,
 * cli, mcp) as a type: `operationPolicies["execComputer"]["permission"]` is `"exec"`. The server types
 * a handler's permission from it, so a handler cannot ask for a role its operation does not declare.
 *
 * @param {{ paths?: Record<string, Record<string, { operationId?: string, 'x-svc'?: unknown }>> }} document
 */
function policyTypes(document) {
  const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
  const lines = [];
  for (const item of Object.values(document.paths ?? {}))
    for (const method of methods) {
      const operation = item[method];
      if (typeof operation?.operationId !== 'string') continue;
      // JSON of the declaration is also its TypeScript type, with every value a literal.
      lines.push(
        `    ${JSON.stringify(operation.operationId)}: ${JSON.stringify(operation['x-svc'] ?? {})};`,
      );
    }
  return `\n/** What each operation declares beyond its HTTP shape (\`x-svc\` in the spec). */\nexport interface operationPolicies {\n${lines.join('\n')}\n}\n`;
}

/**
 * The events of every stream operation (a GET whose 200 answers `text/event-stream`) as a type, one
 * member per `oneOf` branch of its item schema, which openapi-typescript types with `data: unknown` (it
 * does not follow `contentSchema`): `streamEvents["streamWorkspaceEvents"]` is `{ event:
 * "computer.created" | …; id: string; retry?: number; data: components["schemas"]["ComputerEvent"] } | …`.
 * The same walk as src/streams.ts (`eventStream`), whose tests compare the two.
 *
 * @param {{ paths?: Record<string, Record<string, any>>, components?: { schemas?: Record<string, any> } }} document
 */
function streamTypes(document) {
  const schemas = document.components?.schemas ?? {};
  const local = (/** @type {any} */ node) =>
    typeof node?.$ref === 'string' ? schemas[node.$ref.replace('#/components/schemas/', '')] : node;
  const lines = [];
  for (const item of Object.values(document.paths ?? {})) {
    const operation = item.get;
    const schema = operation?.responses?.['200']?.content?.['text/event-stream']?.schema;
    if (typeof operation?.operationId !== 'string' || schema === undefined) continue;
    const itemSchema = local(schema.items);
    const required = new Set(itemSchema?.required ?? []);
    // The SSE fields beside `event` and `data` (`id`, `retry`), typed by their JSON type.
    const scalar = { string: 'string', integer: 'number', number: 'number', boolean: 'boolean' };
    const fields = Object.entries(itemSchema?.properties ?? {})
      .filter(([name]) => name !== 'event' && name !== 'data')
      .map(([name, s]) => `${name}${required.has(name) ? '' : '?'}: ${scalar[s.type] ?? 'unknown'}`);
    const members = (itemSchema?.oneOf ?? []).map((/** @type {any} */ raw) => {
      const branch = local(raw);
      const event = branch.properties?.event ?? {};
      const names = event.const !== undefined ? [event.const] : (event.enum ?? []);
      const ref = branch.properties?.data?.contentSchema?.$ref;
      if (names.length === 0 || typeof ref !== 'string')
        throw new Error(
          `${operation.operationId}: a oneOf branch names no event or no data.contentSchema.$ref`,
        );
      const data = `components["schemas"][${JSON.stringify(ref.replace('#/components/schemas/', ''))}]`;
      const event_ = names.map((n) => JSON.stringify(n)).join(' | ');
      return `{ event: ${event_}; ${fields.map((f) => `${f}; `).join('')}data: ${data} }`;
    });
    lines.push(`    ${JSON.stringify(operation.operationId)}: ${members.join('\n        | ') || 'never'};`);
  }
  return `\n/** The events of each stream operation, one member per branch of its item schema (\`StreamEvent<K>\`). */\nexport interface streamEvents {\n${lines.join('\n')}\n}\n`;
}

/**
 * The stream operations as a value, for code that reads streams without loading the document (a
 * browser's client): each one's path and what each event name means to a reader — `event` (hand it
 * over), `closes` (hand it over, then the stream is over: its branch says `x-svc-closes-stream: true`)
 * or `ended` (`stream.ended`, the server's own last word). The same walk as `streamTypes`.
 *
 * @param {{ paths?: Record<string, Record<string, any>>, components?: { schemas?: Record<string, any> } }} document
 */
function streamOperationsValue(document) {
  const schemas = document.components?.schemas ?? {};
  const local = (/** @type {any} */ node) =>
    typeof node?.$ref === 'string' ? schemas[node.$ref.replace('#/components/schemas/', '')] : node;
  const entries = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const operation = item.get;
    const schema = operation?.responses?.['200']?.content?.['text/event-stream']?.schema;
    if (typeof operation?.operationId !== 'string' || schema === undefined) continue;
    const events = [];
    for (const raw of local(schema.items)?.oneOf ?? []) {
      const branch = local(raw);
      const event = branch.properties?.event ?? {};
      const names = event.const !== undefined ? [event.const] : (event.enum ?? []);
      for (const name of names) {
        const role =
          name === 'stream.ended' ? 'ended' : branch['x-svc-closes-stream'] === true ? 'closes' : 'event';
        events.push(`${JSON.stringify(name)}: ${JSON.stringify(role)}`);
      }
    }
    entries.push(
      `  ${JSON.stringify(operation.operationId)}: { path: ${JSON.stringify(path)}, events: { ${events.join(', ')} } },`,
    );
  }
  return `\n/** Each stream operation's path and what each of its event names means to a reader (\`event\`, \`closes\`, \`ended\`). */\nexport const streamOperations = {\n${entries.join('\n')}\n} as const;\n`;
}

/**
 * The webhooks (the `webhooks` section, one per workspace event type) as a type and a value.
 * openapi-typescript types each webhook's operation under `operations`, by its operationId, beside the
 * API's own (`operations["computerCreatedWebhook"]`); `webhookOperations` names them, so `OperationId`
 * (src/types.ts) leaves them out: no client calls them, no handler serves them. `webhookEventTypes` lists
 * the event types as a value, for code that must not re-type the list (a subscription's choices).
 *
 * @param {{ webhooks?: Record<string, { post?: { operationId?: string } }> }} document
 */
function webhookTypes(document) {
  const entries = Object.entries(document.webhooks ?? {}).filter(
    ([, item]) => typeof item?.post?.operationId === 'string',
  );
  const lines = entries.map(
    ([name, item]) => `    ${JSON.stringify(name)}: ${JSON.stringify(item.post?.operationId)};`,
  );
  const names = entries.map(([name]) => `  ${JSON.stringify(name)},`);
  return (
    `\n/** The operationId of each webhook's \`post\`, by event type (\`WebhookEvent<T>\`). */\nexport interface webhookOperations {\n${lines.join('\n')}\n}\n` +
    `\n/** The event types that have a webhook, in spec order. */\nexport const webhookEventTypes = [\n${names.join('\n')}\n] as const;\n`
  );
}

const documentText = await readFile(bundle, 'utf8');
const shape = withoutProse(JSON.parse(documentText));
// The key of the types: the shape, the generator's version and these scripts. When it is the one recorded
// beside schema.ts, openapi-typescript (the slow part) is not even loaded.
const generator = require('openapi-typescript/package.json').version;
const scripts = await Promise.all(
  ['generate.mjs', 'shape.mjs'].map((f) => readFile(new URL(f, import.meta.url))),
);
const key = createHash('sha256')
  .update(JSON.stringify(shape))
  .update(generator)
  .update(Buffer.concat(scripts))
  .digest('hex');
const keyFile = new URL('schema.sha256', generated);
const schemaFile = new URL('schema.ts', generated);
await mkdir(generated, { recursive: true });
await mkdir(distGenerated, { recursive: true });
const written = [];
const recorded = await readFile(keyFile, 'utf8').catch(() => '');
if (recorded.trim() !== key || !existsSync(schemaFile)) {
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const { default: ts } = await import('typescript');
  const ast = await openapiTS(/** @type {never} */ (shape), {
    immutable: false,
    alphabetize: false,
    exportType: false,
    rootTypes: false,
    // A request field with a `default` is still optional to send (the server applies the default):
    // without this, openapi-typescript types it as required (`timeout_seconds` of execComputer).
    defaultNonNullable: false,
    transform: (schema, metadata) => openEnum(ts, schema) ?? byteBody(ts, schema, metadata?.path),
  });
  const banner =
    '// Generated by scripts/generate.mjs from the shape of spec/dist/openapi.json (prose removed). Do not edit.\n\n';
  if (
    await writeIfChanged(
      schemaFile,
      banner +
        astToString(ast) +
        securityTypes(shape) +
        policyTypes(shape) +
        streamTypes(shape) +
        streamOperationsValue(shape) +
        webhookTypes(shape),
    )
  )
    written.push('schema.ts');
  await writeIfChanged(keyFile, `${key}\n`);
}
// The document ships beside the code that reads it, in src/ for tests and in dist/ for consumers.
if (await writeIfChanged(new URL('openapi.json', generated), documentText)) written.push('src openapi.json');
if (await writeIfChanged(new URL('openapi.json', distGenerated), documentText))
  written.push('dist openapi.json');
console.log(
  `contract: ${written.length ? `wrote ${written.join(', ')}` : 'generated files unchanged'} from ${bundle}`,
);
