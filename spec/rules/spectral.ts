/**
 * Loads rules/spectral.yaml the way `spectral lint` does and lints documents in-process, so rule
 * tests run in milliseconds instead of spawning the CLI for every case.
 *
 * @example
 * const results = await lint(JSON.parse(readFileSync('dist/openapi.json', 'utf8')), 'dist/openapi.json');
 * const errors = results.filter((r) => r.severity === 0);
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { Spectral, Document } = require('@stoplight/spectral-core');
const { Json } = require('@stoplight/spectral-parsers');

/** Absolute path of the ruleset under test. */
export const RULESET = fileURLToPath(new URL('./spectral.yaml', import.meta.url));

/** One Spectral finding, trimmed to what the tests assert on. */
export interface Finding {
  code: string;
  message: string;
  /** JSON path of the finding in the linted document. */
  path: (string | number)[];
  /** 0 error, 1 warning, 2 information, 3 hint. */
  severity: number;
}

/**
 * `@stoplight/spectral-ruleset-bundler` is what spectral-cli uses to turn a YAML ruleset with
 * `extends` and `functions` into a Ruleset; the same version is pinned here so tests and CLI agree.
 */
function requireBundler(subpath: string) {
  return require(`@stoplight/spectral-ruleset-bundler/${subpath}`);
}

const rulesets = new Map<string, Promise<unknown>>();

/**
 * A ruleset (by default rules/spectral.yaml), bundled once per test file and path (the same plugins as
 * spectral-cli: builtins, commonjs).
 */
export function loadRuleset(file: string = RULESET): Promise<unknown> {
  let loading = rulesets.get(file);
  if (loading === undefined) {
    const { bundleAndLoadRuleset } = requireBundler('with-loader');
    const { builtins } = requireBundler('plugins/builtins');
    const { commonjs } = requireBundler('plugins/commonjs');
    loading = bundleAndLoadRuleset(file, { fs, fetch: globalThis.fetch }, [
      builtins(),
      commonjs(),
    ]) as Promise<unknown>;
    rulesets.set(file, loading);
  }
  return loading;
}

/**
 * Lints one OpenAPI document (an object or JSON text) with the full ruleset (or another one, by path).
 * `source` is the file name the document is reported under; the ruleset's `overrides` match on it.
 */
export async function lint(document: unknown, source: string, ruleset: string = RULESET): Promise<Finding[]> {
  const spectral = new Spectral();
  spectral.setRuleset(await loadRuleset(ruleset));
  const text = typeof document === 'string' ? document : JSON.stringify(document, null, 2);
  const results = await spectral.run(new Document(text, Json, path.resolve(source)));
  return results.map((r: Finding) => ({
    code: String(r.code),
    message: r.message,
    path: r.path,
    severity: r.severity,
  }));
}
