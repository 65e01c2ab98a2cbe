// Bundles the spec sources as `@svc/spec`'s build does, in-process with @redocly/openapi-core (the engine
// of `redocly bundle`), in about 0.2–0.9 s, where starting the CLI costs 0.5–2 s on two busy cores, and
// running it for the YAML bundle held up the next save by 1–4 s. The bytes are the CLI's own: its
// top-level keys in its order, JSON with two spaces, YAML from the same dumper with the same options
// (test/spec-dev-bundle.test.ts compares them). A bundle with errors never replaces the last good one,
// which the preview and the mock keep serving.
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  bundle as bundleDocument,
  getLineColLocation,
  loadConfig,
  stringifyYaml,
} from '@redocly/openapi-core';
import { writeFileAtomic } from '../atomic-file.mjs';
import { rootOf } from '../spec-bundle.mjs';

/** `redocly bundle`'s order of an OpenAPI 3 document's top-level keys; the others follow as they came. */
const TOP_LEVEL_ORDER = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'security',
  'tags',
  'externalDocs',
  'paths',
  'webhooks',
  'x-webhooks',
  'components',
];

/**
 * Bundles the sources in-process, with the rules of `<specDir>/redocly.yaml` (read again each time: the
 * designer may be editing it too).
 *
 * @param {{ specDir: string }} options
 * @returns {Promise<{ ok: true, doc: Record<string, any>, text: string } | { ok: false, error: string }>}
 *   `doc`: the bundle, never changed afterwards; `text`: its JSON as `redocly bundle --ext json` writes it;
 *   `error`: one line per problem, `<file>:<line>:<column> <message>`, or the parser's message
 */
export async function bundleJson({ specDir }) {
  try {
    const config = await loadConfig({ configPath: join(specDir, 'redocly.yaml') });
    const root = rootOf(specDir);
    const result = await bundleDocument({ ref: join(specDir, root), config, dereference: false });
    const errors = result.problems.filter((problem) => problem.severity === 'error');
    if (errors.length > 0) return { ok: false, error: errors.map((e) => describe(specDir, e)).join('\n') };
    const parsed = result.bundle.parsed;
    const doc = {};
    for (const key of TOP_LEVEL_ORDER) if (Object.hasOwn(parsed, key)) doc[key] = parsed[key];
    Object.assign(doc, parsed);
    return { ok: true, doc, text: JSON.stringify(doc, null, 2) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The YAML bundle of `doc`, as `redocly bundle` writes it (js-yaml, no anchors, no line folding).
 *
 * @param {Record<string, any>} doc a bundle from {@link bundleJson}
 * @returns {string}
 */
export function bundleYaml(doc) {
  return stringifyYaml(doc, { noRefs: true, lineWidth: -1 });
}

/** One bundling problem as `<file>:<line>:<column> <message>`, the file relative to the spec folder. */
function describe(specDir, problem) {
  const location = problem.location?.[0];
  if (!location) return problem.message;
  const { start } = getLineColLocation(location);
  const file = relative(specDir, location.source.absoluteRef);
  return `${file}:${start?.line ?? 1}:${start?.col ?? 1} ${problem.message}`;
}

/**
 * Makes a good bundle `<specDir>/dist/openapi.<ext>`, where `@svc/spec`'s build puts it, unless the file
 * already holds it.
 *
 * @param {{ specDir: string, ext: 'json' | 'yaml', text: string }} options
 * @returns {Promise<boolean>} whether the file changed
 */
export async function installBundle({ specDir, ext, text }) {
  const target = join(specDir, 'dist', `openapi.${ext}`);
  const previous = await readFile(target, 'utf8').catch(() => undefined);
  if (previous === text) return false;
  // Renamed into place: other processes (a test, `pnpm mock`'s Prism, a build) read it meanwhile.
  await writeFileAtomic(target, text);
  return true;
}
