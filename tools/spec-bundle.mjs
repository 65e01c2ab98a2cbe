// Bundles a spec tree the way `@svc/spec`'s build does: `redocly bundle` run inside the tree, so the
// tree's own redocly.yaml (its `apis` root, decorators and plugins) applies.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runRedocly } from './redocly.mjs';

/**
 * The source root named by `redocly.yaml` in `specDir` (the first entry of `apis`), relative to
 * `specDir`; `openapi.yaml` when the file or the entry is missing.
 *
 * @example
 * rootOf('spec'); // → 'openapi.yaml'
 */
export function rootOf(specDir) {
  const config = join(specDir, 'redocly.yaml');
  if (!existsSync(config)) return 'openapi.yaml';
  const apis = parse(readFileSync(config, 'utf8'))?.apis ?? {};
  const first = Object.values(apis)[0];
  return typeof first?.root === 'string' ? first.root : 'openapi.yaml';
}

/**
 * Bundles `specDir` into one document at `output` and returns it parsed.
 * Throws with Redocly's error output when the bundle cannot be made.
 *
 * @param {string} specDir directory holding redocly.yaml and the source root
 * @param {string} output path of the JSON bundle to write
 * @param {'json' | 'yaml'} [ext] format of the bundle (the returned value is parsed either way)
 * @returns {Record<string, unknown>}
 */
export function bundleSpec(specDir, output, ext = 'json') {
  const result = runRedocly(['bundle', rootOf(specDir), '--ext', ext, '-o', output], { cwd: specDir });
  if (result.status !== 0 || !existsSync(output)) {
    throw new Error(`redocly bundle failed in ${specDir}:\n${result.stderr}`);
  }
  return parse(readFileSync(output, 'utf8'));
}
