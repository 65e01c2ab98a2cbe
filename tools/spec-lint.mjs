#!/usr/bin/env node
// `pnpm spec:lint`: every linter of the contract, each finding at the source line a designer edits.
//
//   node tools/spec-lint.mjs [--spec spec] [--bundle dist/openapi.json] [--fail-severity warn]
//
// Runs, all of them, even when one fails (concurrently):
//   - `redocly lint` on the source root (spec/redocly.yaml's rules; findings are already in the sources),
//   - `redocly lint` on the YAML bundle, and
//   - Spectral with rules/spectral.yaml (our rules + OWASP) on the JSON bundle, in-process
//     (tools/spec-spectral.mjs, so a finding on a `$ref` keeps the path of that `$ref`),
// reading each tool's JSON output. Findings on the bundle are mapped back to the sources through
// tools/spec-source-map.mjs. A finding on a value written as a `$ref` (a property, parameter,
// response, request body, items, Path Item) is shown at that `$ref`, in the file that holds it, not at
// the top of the referenced file: Spectral's path says which `$ref` it came through, and Redocly's
// finding on a node that one `$ref` uses is that `$ref`'s. A fault of the referenced node itself
// (Spectral finds it where the node is written too; Redocly finds it on a node several `$ref`s share)
// stays where the node is written, once. Each finding prints as one line:
//
//   spec/<file>:<line>:<column> <severity> <rule> <message>
//
// then one summary line. Exit 1 when any finding is at or above --fail-severity (default `warn`, as
// the ruleset's `--fail-severity warn` policy: a warning fails like an error), 2 when a linter could
// not run at all.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REDOCLY_ENV } from './redocly.mjs';
import { rootOf } from './spec-bundle.mjs';
import { SourceMap } from './spec-source-map.mjs';
import { runSpectral } from './spec-spectral.mjs';

const require = createRequire(import.meta.url);
const redoclyCli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/**
 * The linters, in the order they are reported: Redocly on the sources, Redocly on the YAML bundle,
 * Spectral (rules/spectral.yaml: spectral:oas, our svc-* rules, OWASP) on the JSON bundle.
 * @typedef {'redocly-sources' | 'redocly-bundle' | 'spectral'} Linter
 */
export const LINTERS = /** @type {Linter[]} */ (['redocly-sources', 'redocly-bundle', 'spectral']);

/** Severity names in the printed order of gravity. */
export const SEVERITIES = ['error', 'warning', 'info', 'hint'];

/**
 * @typedef {object} Finding
 * @property {string} file absolute path of the source file
 * @property {number} line
 * @property {number} column
 * @property {'error' | 'warning' | 'info' | 'hint'} severity
 * @property {string} rule rule id (Redocly's ruleId, Spectral's code)
 * @property {string} message one line
 * @property {'redocly' | 'spectral'} tool
 */

/**
 * Runs every linter over `specDir` and returns the findings, mapped to the sources and de-duplicated.
 *
 * @param {{ specDir: string, bundle?: string, bundleYaml?: string, ruleset?: string, only?: Linter[] }} options
 *   `bundle` (JSON) and `bundleYaml` default to dist/openapi.json and dist/openapi.yaml in specDir;
 *   `ruleset` to rules/spectral.yaml there; `only` picks some of the linters (default: all).
 * @returns {Promise<{ findings: Finding[], failures: string[] }>} `failures`: linters that could not run
 * @example
 * const { findings } = await lintSpec({ specDir: 'spec' });
 * for (const f of findings) console.log(formatFinding(f, '.'));
 */
export async function lintSpec({ specDir, bundle, bundleYaml, ruleset, only = LINTERS }) {
  const dir = resolve(specDir);
  const root = join(dir, rootOf(dir));
  const json = resolve(dir, bundle ?? 'dist/openapi.json');
  const yaml = resolve(dir, bundleYaml ?? 'dist/openapi.yaml');
  const rules = resolve(dir, ruleset ?? 'rules/spectral.yaml');
  const map = new SourceMap(root);
  const failures = [];
  const linters = {
    'redocly-sources': () => redoclyLint(dir, root, map, failures),
    'redocly-bundle': () =>
      existsSync(yaml) ? redoclyLint(dir, yaml, map, failures) : missing(yaml, failures),
    spectral: () =>
      existsSync(json) ? spectralLint(dir, json, rules, map, failures) : missing(json, failures),
  };
  const runs = only.map((name) => linters[name]());
  const findings = atFault((await Promise.all(runs)).flat());
  const seen = new Set();
  const unique = findings.filter((f) => {
    const key = `${f.file}:${f.line}:${f.column}:${f.rule}:${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  unique.sort(
    (a, b) =>
      a.file.localeCompare(b.file) ||
      a.line - b.line ||
      a.column - b.column ||
      a.rule.localeCompare(b.rule) ||
      a.message.localeCompare(b.message),
  );
  return { findings: unique, failures };
}

/**
 * The findings without the copies a `$ref` got of its target's own finding. A linter that checks a
 * shared node where it is written and again through every `$ref` to it (Spectral checks each path)
 * finds a fault of the node at each `$ref` too: the same rule and message where the node is written
 * say it is the node's, so it is shown there, once. A finding only a `$ref` gets (a camelCase property
 * name, a response an operation must not use) stays at the `$ref`.
 */
function atFault(findings) {
  const at = (f) => `${f.tool} ${f.file}:${f.line}:${f.column} ${f.rule} ${f.message}`;
  const places = new Set(findings.map(at));
  return findings
    .filter((f) => !f.refersTo || !places.has(at({ ...f, ...f.refersTo })))
    .map(({ refersTo: _, ...finding }) => finding);
}

/** One finding as `spec/<file>:<line>:<column> <severity> <rule> <message>`, paths relative to `base`. */
export function formatFinding(finding, base) {
  const file = relative(base, finding.file) || finding.file;
  return `${file}:${finding.line}:${finding.column} ${finding.severity} ${finding.rule} ${finding.message}`;
}

/** The summary line, e.g. `spec-lint: 2 errors, 1 warning (redocly 1, spectral 2)`. */
export function summarize(findings, failures) {
  const count = (severity) => findings.filter((f) => f.severity === severity).length;
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const byTool = ['redocly', 'spectral'].map((t) => `${t} ${findings.filter((f) => f.tool === t).length}`);
  const broken = failures.length ? `; could not run: ${failures.join(', ')}` : '';
  return `spec-lint: ${plural(count('error'), 'error')}, ${plural(count('warning'), 'warning')}, ${plural(
    count('info') + count('hint'),
    'note',
  )} (${byTool.join(', ')})${broken}`;
}

function missing(file, failures) {
  failures.push(`${file} is missing (run the spec build first)`);
  return [];
}

/** Runs a node script and resolves with its exit status and output (never rejects). */
function run(script, args, cwd) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd,
      env: { ...process.env, ...REDOCLY_ENV, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', (error) => done({ status: 2, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (status) => done({ status: status ?? 2, stdout, stderr }));
  });
}

/** JSON text from a tool's stdout (tools may print a banner around it). */
function parseJson(text) {
  const start = text.search(/^[[{]/m);
  if (start < 0) throw new Error('no JSON output');
  return JSON.parse(text.slice(start));
}

async function redoclyLint(dir, file, map, failures) {
  const { stdout, stderr } = await run(redoclyCli, ['lint', file, '--format', 'json'], dir);
  const isSource = file === map.rootFile;
  let report;
  try {
    report = parseJson(stdout);
  } catch {
    failures.push(`redocly lint ${relative(dir, file)}: ${firstLine(stderr || stdout)}`);
    return [];
  }
  return report.problems.map((problem) => {
    const at = problem.location?.[0] ?? {};
    const source = resolve(dir, at.source?.ref ?? file);
    // On the sources Redocly reports the position itself; on the bundle its pointer is mapped back.
    const here =
      isSource || source !== file
        ? { file: source, line: at.start?.line ?? 1, column: at.start?.col ?? 1, pointer: at.pointer }
        : map.locate(at.pointer ?? '#/', { onKey: at.reportOnKey !== false });
    const place = placeOf(map, here);
    return {
      file: place.file,
      line: place.line,
      column: place.column,
      severity: problem.severity === 'warn' ? 'warning' : problem.severity,
      rule: problem.ruleId,
      message: oneLine(problem.message),
      tool: 'redocly',
      refersTo: place.refersTo,
    };
  });
}

/**
 * Where a Redocly finding at `here` is shown. Redocly reports a node that `$ref`s use where the node
 * is written (the top of the referenced file, for a whole file), and checks it once however many use
 * it: a node one `$ref` uses is that `$ref`'s value, so the finding is shown at that `$ref`; a node
 * several use is shared, and its finding stays where it is written, once. A finding on a `$ref` node
 * itself is shown at its `$ref` key, as the bundle's pointer to it is.
 */
function placeOf(map, here) {
  if (here.pointer === undefined || here.exact === false) return here;
  const referrers = map.referrers(here.file, here.pointer);
  if (referrers.length === 1) return referrers[0];
  if (referrers.length > 1) return here;
  return map.refKey(here.file, here.pointer) ?? here;
}

async function spectralLint(dir, file, ruleset, map, failures) {
  let results;
  try {
    results = await runSpectral(file, ruleset);
  } catch (error) {
    failures.push(`spectral: ${firstLine(error instanceof Error ? error.message : String(error))}`);
    return [];
  }
  return results.map((result) => {
    const source = isAbsolute(result.source ?? '') ? result.source : resolve(dir, result.source ?? file);
    const here =
      source === file
        ? map.locate(result.path)
        : { file: source, line: result.range.start.line + 1, column: result.range.start.character + 1 };
    return {
      file: here.file,
      line: here.line,
      column: here.column,
      severity: SEVERITIES[result.severity] ?? 'error',
      rule: String(result.code),
      message: oneLine(result.message),
      tool: 'spectral',
      refersTo: here.refersTo,
    };
  });
}

const oneLine = (text) => String(text).replace(/\s+/g, ' ').trim();
const firstLine = (text) => oneLine(text.split('\n').find((l) => l.trim()) ?? 'failed');

async function main() {
  const { values } = parseArgs({
    options: {
      spec: { type: 'string' },
      bundle: { type: 'string' },
      'bundle-yaml': { type: 'string' },
      ruleset: { type: 'string' },
      'fail-severity': { type: 'string', default: 'warn' },
    },
  });
  const here = fileURLToPath(new URL('.', import.meta.url));
  const specDir = resolve(values.spec ?? join(here, '..', 'spec'));
  const failAt = SEVERITIES.indexOf(values['fail-severity'] === 'warn' ? 'warning' : values['fail-severity']);
  if (failAt < 0) throw new Error(`--fail-severity must be one of error, warn, info, hint`);
  const { findings, failures } = await lintSpec({
    specDir,
    bundle: values.bundle,
    bundleYaml: values['bundle-yaml'],
    ruleset: values.ruleset,
  });
  // Paths print from the repository root: spec/<file>.
  const base = dirname(specDir);
  for (const finding of findings) console.log(formatFinding(finding, base));
  for (const failure of failures) console.log(`spec-lint: could not run ${failure}`);
  console.log(summarize(findings, failures));
  if (failures.length) return 2;
  return findings.some((f) => SEVERITIES.indexOf(f.severity) <= failAt) ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      console.error(`spec-lint: ${error.message}`);
      process.exitCode = 2;
    },
  );
}
