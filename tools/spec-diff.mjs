#!/usr/bin/env node
// Breaking-change gate: within /v1 only additive changes pass (API.md §12).
//
//   node tools/spec-diff.mjs [base-ref] [--report reports/spec-diff.md]
//
// Bundles spec/ as it is at the base ref and as it is in the working tree, then asks
// `redocly diff --fail-on major` whether the change needs a major bump.
// The base ref defaults to the merge-base of HEAD with origin/main (or main); on main itself
// that is HEAD, so the gate checks the uncommitted edits.
// Exit codes: 0 additive or no base spec, 1 breaking changes, 2 the gate could not run.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runRedocly } from './redocly.mjs';

const SPEC_DIR = 'spec';
const ROOT_FILE = 'openapi.yaml';

class GateError extends Error {}

function git(args, cwd) {
  const result = spawnSync('git', args, { cwd, encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 });
  return { ok: result.status === 0, out: result.stdout, text: result.stdout.toString('utf8').trim() };
}

function commitOf(ref, cwd) {
  const result = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], cwd);
  return result.ok ? result.text : undefined;
}

/** The commit to compare against, or undefined when the repository has no commit yet. */
function resolveBase(explicitRef, cwd) {
  if (explicitRef) {
    const sha = commitOf(explicitRef, cwd);
    if (!sha) throw new GateError(`unknown git ref "${explicitRef}"`);
    return { label: explicitRef, sha };
  }
  for (const branch of ['origin/main', 'main']) {
    if (!commitOf(branch, cwd)) continue;
    const mergeBase = git(['merge-base', 'HEAD', branch], cwd);
    if (mergeBase.ok) return { label: `merge-base(HEAD, ${branch})`, sha: mergeBase.text };
  }
  const head = commitOf('HEAD', cwd);
  return head ? { label: 'HEAD', sha: head } : undefined;
}

/** Writes `<ref>:spec/` into `into/spec` and returns that directory. */
function extractSpec(sha, root, into) {
  const archive = git(['archive', '--format=tar', sha, SPEC_DIR], root);
  if (!archive.ok) throw new GateError(`git archive ${sha} ${SPEC_DIR} failed`);
  const untar = spawnSync('tar', ['-x', '-C', into], { input: archive.out });
  if (untar.status !== 0) throw new GateError(`tar failed: ${untar.stderr}`);
  const specDir = join(into, SPEC_DIR);
  // Plugins named in the base redocly.yaml resolve their imports from the installed packages.
  const installed = join(root, SPEC_DIR, 'node_modules');
  if (existsSync(installed) && !existsSync(join(specDir, 'node_modules'))) {
    symlinkSync(installed, join(specDir, 'node_modules'), 'dir');
  }
  return specDir;
}

function bundle(specDir, output) {
  const result = runRedocly(['bundle', ROOT_FILE, '--ext', 'json', '-o', output], { cwd: specDir });
  if (result.status !== 0 || !existsSync(output)) {
    throw new GateError(`redocly bundle failed in ${specDir}:\n${result.stderr}`);
  }
}

function writeReport(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { report: { type: 'string' } },
  });
  const cwd = process.cwd();
  const root = git(['rev-parse', '--show-toplevel'], cwd);
  if (!root.ok) throw new GateError('not inside a git repository');
  const reportPath = resolve(cwd, values.report ?? join(root.text, 'reports', 'spec-diff.md'));
  const shownReport = relative(cwd, reportPath) || reportPath;

  const currentRoot = join(root.text, SPEC_DIR, ROOT_FILE);
  if (!existsSync(currentRoot))
    throw new GateError(`${SPEC_DIR}/${ROOT_FILE} is missing from the working tree`);

  const base = resolveBase(positionals[0], root.text);
  const baseName = base ? `${base.label} (${base.sha.slice(0, 12)})` : 'no commit';
  if (!base || !git(['cat-file', '-e', `${base.sha}:${SPEC_DIR}/${ROOT_FILE}`], root.text).ok) {
    const message = `No ${SPEC_DIR}/${ROOT_FILE} at the base ref ${baseName}: nothing to compare, the gate passes.`;
    writeReport(reportPath, `# Spec diff\n\n${message}\n`);
    console.log(`spec-diff: ${message}`);
    return 0;
  }

  const work = mkdtempSync(join(tmpdir(), 'spec-diff-'));
  try {
    const baseBundle = join(work, 'base.json');
    const currentBundle = join(work, 'working-tree.json');
    bundle(extractSpec(base.sha, root.text, work), baseBundle);
    bundle(join(root.text, SPEC_DIR), currentBundle);

    const jsonPath = join(work, 'diff.json');
    const gate = runRedocly(
      ['diff', baseBundle, currentBundle, '--fail-on', 'major', '--format', 'json', '-o', jsonPath],
      {
        cwd: work,
      },
    );
    if (!existsSync(jsonPath)) throw new GateError(`redocly diff failed:\n${gate.stderr}`);
    const { summary } = JSON.parse(readFileSync(jsonPath, 'utf8'));
    const breaking = summary.major > 0;
    if (breaking !== (gate.status !== 0))
      throw new GateError(`redocly diff exited ${gate.status}:\n${gate.stderr}`);

    const mdPath = join(work, 'diff.md');
    runRedocly(
      ['diff', baseBundle, currentBundle, '--fail-on', 'none', '--format', 'markdown', '-o', mdPath],
      { cwd: work },
    );
    const verdict = breaking ? 'FAIL: breaking changes within /v1' : 'PASS: additive changes only';
    const header = `# Spec diff\n\nBase: \`${baseName}\` · revision: working tree · **${verdict}**\n\n`;
    writeReport(reportPath, header + readFileSync(mdPath, 'utf8'));

    const listing = runRedocly(['diff', baseBundle, currentBundle, '--fail-on', 'none'], { cwd: work });
    if (listing.stdout.trim()) console.log(listing.stdout.trimEnd());
    console.log(
      `\nspec-diff: ${baseName} → working tree: ${summary.major} major, ${summary.minor} minor, ${summary.patch} patch. ${verdict}.`,
    );
    console.log(`spec-diff: report written to ${shownReport}`);
    return breaking ? 1 : 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

try {
  process.exitCode = main();
} catch (error) {
  // Exit 2, not 1: a gate that could not run must not read as "breaking changes found".
  console.error(`spec-diff: ${error instanceof GateError ? error.message : error?.stack}`);
  process.exitCode = 2;
}
