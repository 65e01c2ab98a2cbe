// Bundles the spec sources as `@svc/spec`'s build does. The JSON bundle, which the preview and the mock
// read, is made in-process with @redocly/openapi-core (the engine of `redocly bundle`, and the same bytes
// as the CLI's `--ext json` output) in about 0.2 s, where starting the CLI costs 0.5–2 s on two busy
// cores. The YAML bundle comes from the CLI itself, off the preview's critical path. A bundle with errors
// never replaces the last good one, which the preview and the mock keep serving.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { bundle as bundleDocument, getLineColLocation, loadConfig } from '@redocly/openapi-core';
import { parse } from 'yaml';
import { writeFileAtomic } from '../atomic-file.mjs';
import { REDOCLY_ENV } from '../redocly.mjs';

const require = createRequire(import.meta.url);
const redoclyCli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/**
 * Runs `redocly <args>` in `cwd` and resolves with its exit code and output (never rejects on failure).
 *
 * @param {string[]} args
 * @param {string} cwd
 * @returns {Promise<{ code: number, output: string }>}
 */
function redocly(args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [redoclyCli, ...args], {
      cwd,
      env: { ...process.env, ...REDOCLY_ENV, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/**
 * Bundles the sources to JSON in-process, with the rules of `<specDir>/redocly.yaml`.
 *
 * @param {{ specDir: string, root: string }} options
 * @returns {Promise<{ ok: true, text: string } | { ok: false, error: string }>} `error`: one line per
 *   problem, `<file>:<line>:<column> <message>`, or the parser's message
 */
export async function bundleJson({ specDir, root }) {
  try {
    const config = await loadConfig({ configPath: join(specDir, 'redocly.yaml') });
    const result = await bundleDocument({ ref: join(specDir, root), config, dereference: false });
    const errors = result.problems.filter((problem) => problem.severity === 'error');
    if (errors.length > 0) return { ok: false, error: errors.map((e) => describe(specDir, e)).join('\n') };
    return { ok: true, text: JSON.stringify(result.bundle.parsed, null, 2) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
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
 * Bundles with the Redocly CLI into a staging file under `<specDir>/dist/.spec-dev/`. Only a bundle that Redocly reports as
 * good (exit 0) and that parses comes back `ok`; nothing in dist/ is touched (see installBundle).
 *
 * @param {{ specDir: string, root: string, ext: 'json' | 'yaml' }} options
 * @returns {Promise<{ ok: true, text: string } | { ok: false, error: string }>}
 */
export async function bundleWithCli({ specDir, root, ext }) {
  const staging = join(specDir, 'dist', '.spec-dev');
  await mkdir(staging, { recursive: true });
  const staged = join(staging, `openapi.${ext}`);
  const { code, output } = await redocly(
    ['bundle', root, ...(ext === 'json' ? ['--ext', 'json'] : []), '-o', staged],
    specDir,
  );
  if (code !== 0) return { ok: false, error: tidy(output) };
  const text = await readFile(staged, 'utf8');
  try {
    if (ext === 'json') JSON.parse(text);
    else parse(text);
  } catch (error) {
    return { ok: false, error: `the bundle does not parse: ${error.message}` };
  }
  return { ok: true, text };
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

/** Redocly's report without its progress lines, which say nothing about what went wrong. */
function tidy(output) {
  return output
    .split('\n')
    .filter((line) => !/^bundling .* using configuration/.test(line))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
