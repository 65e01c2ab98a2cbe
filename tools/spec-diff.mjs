#!/usr/bin/env node
// The breaking-change gate: applies docs/compatibility.md (coded in tools/spec-compat.mjs) to the
// working tree's contract.
//
//   node tools/spec-diff.mjs [base] [--report reports/spec-diff.md]
//
// base: a git ref, or `released` for the last released contract (spec/released/v1.json). Without it:
// on a branch, the merge base with main (origin/main, else main); on main itself, a detached HEAD
// on main's tip, or with no main to compare with (a fresh clone without `origin`), the released
// contract. Both sides are bundled with `redocly bundle` inside their spec/ tree, so spec/redocly.yaml
// (its `apis` root) applies. A breaking change passes only when spec/breaking-changes.yaml records it
// with a reason. Every change prints as
//
//   spec/<file>:<line>:<column> <class> <kind> <METHOD /path>: <message>
//
// (the location in the current sources), then one summary line; the Markdown report lists each
// change under every operation it reaches. Exit codes: 0 pass, 1 unrecorded breaking changes,
// 2 the gate could not run.
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
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { bundleSpec, rootOf } from './spec-bundle.mjs';
import { compareContracts } from './spec-compat.mjs';
import { SourceMap } from './spec-source-map.mjs';

const SPEC_DIR = 'spec';
/** The last released contract, written by `pnpm spec:release`. */
export const RELEASED = 'spec/released/v1.json';
/** Deliberate breaking changes since the last release, each with its reason. */
export const ACCEPTED = 'spec/breaking-changes.yaml';

class GateError extends Error {}

function git(args, cwd) {
  const result = spawnSync('git', args, { cwd, encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 });
  return { ok: result.status === 0, out: result.stdout, text: result.stdout.toString('utf8').trim() };
}

const commitOf = (ref, cwd) => {
  const result = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], cwd);
  return result.ok ? result.text : undefined;
};

/**
 * What to compare the working tree with.
 * @returns {{ kind: 'git', label: string, sha: string } | { kind: 'released', label: string }}
 */
export function chooseBase(explicit, root) {
  const released = { kind: 'released', label: `the last released contract (${RELEASED})` };
  if (explicit === 'released') return released;
  if (explicit) {
    const sha = commitOf(explicit, root);
    if (!sha) throw new GateError(`unknown git ref "${explicit}"`);
    return { kind: 'git', label: explicit, sha };
  }
  const head = commitOf('HEAD', root);
  if (!head) return released;
  const branch = git(['rev-parse', '--abbrev-ref', 'HEAD'], root).text;
  for (const main of ['origin/main', 'main']) {
    const tip = commitOf(main, root);
    if (!tip) continue;
    // On main (or its tip, checked out detached as CI does) the merge base is HEAD itself, and a
    // committed change would never be checked: compare with what was released instead.
    if (branch === 'main' || (branch === 'HEAD' && tip === head)) return released;
    const mergeBase = git(['merge-base', 'HEAD', main], root);
    if (mergeBase.ok) return { kind: 'git', label: `merge-base(HEAD, ${main})`, sha: mergeBase.text };
  }
  return released;
}

/** Writes `<sha>:spec/` into `into/spec` and returns that directory. */
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

/**
 * The recorded breaking changes: `accepted:` entries with `change` (a kind), optional `operation`
 * (`METHOD /path`) and `where` (text the change's message or place contains), and a `reason`.
 */
export function readAccepted(file) {
  if (!existsSync(file)) return [];
  const list = parse(readFileSync(file, 'utf8'))?.accepted ?? [];
  if (!Array.isArray(list)) throw new GateError(`${ACCEPTED}: \`accepted\` must be a list`);
  return list.map((entry, i) => {
    if (typeof entry?.change !== 'string' || typeof entry?.reason !== 'string' || !entry.reason.trim()) {
      throw new GateError(
        `${ACCEPTED}: entry ${i + 1} needs \`change\` (the kind) and a non-empty \`reason\``,
      );
    }
    return { ...entry, used: false };
  });
}

function acceptance(change, accepted) {
  const entry = accepted.find(
    (e) =>
      e.change === change.kind &&
      (e.operation === undefined || e.operation === change.operation) &&
      (e.where === undefined || `${change.where} ${change.message}`.includes(e.where)),
  );
  if (entry) entry.used = true;
  return entry;
}

/**
 * Groups changes per operation, one entry per distinct change (a shared schema reached through
 * several responses of one operation is one change with several places).
 */
function groupByOperation(changes) {
  const byOperation = new Map();
  for (const change of changes) {
    const list = byOperation.get(change.operation) ?? new Map();
    byOperation.set(change.operation, list);
    const key = `${change.kind}|${change.pointer}|${change.message}`;
    const seen = list.get(key);
    if (seen) {
      if (!seen.places.includes(change.where)) seen.places.push(change.where);
    } else list.set(key, { ...change, places: [change.where] });
  }
  return new Map([...byOperation].map(([op, list]) => [op, [...list.values()]]));
}

const HEADINGS = {
  breaking: 'Breaking changes',
  deprecation: 'Deprecations',
  additive: 'Additive changes',
};

/** The Markdown report: verdict, then per class, per operation, one line per change. */
function report({ baseLabel, verdict, grouped, counts, unused }) {
  const lines = [
    '# API contract changes',
    '',
    `Compared with ${baseLabel} · **${verdict}**`,
    '',
    `${counts.breaking} breaking (${counts.accepted} recorded in \`${ACCEPTED}\`), ${counts.deprecation} deprecations, ${counts.additive} additive, across ${counts.operations} operations. Policy: \`docs/compatibility.md\`.`,
  ];
  for (const cls of ['breaking', 'deprecation', 'additive']) {
    const ops = [...grouped].filter(([, list]) => list.some((c) => c.class === cls));
    if (!ops.length) continue;
    lines.push('', `## ${HEADINGS[cls]}`);
    for (const [operation, list] of ops) {
      const id = list[0].operationId ? ` (\`${list[0].operationId}\`)` : '';
      lines.push('', `### ${operation === '*' ? 'Whole API' : `\`${operation}\`${id}`}`, '');
      for (const c of list.filter((x) => x.class === cls)) {
        const where = c.places.join('; ');
        const accepted = c.accepted ? ` — **recorded**: ${c.accepted.reason.trim()}` : '';
        lines.push(`- \`${c.kind}\`: ${c.message} (${where}) — \`${c.location}\`${accepted}`);
      }
    }
  }
  if (unused.length) {
    lines.push('', `## Entries of \`${ACCEPTED}\` that matched no change`, '');
    for (const e of unused)
      lines.push(`- \`${e.change}\`${e.operation ? ` on \`${e.operation}\`` : ''}: ${e.reason.trim()}`);
  }
  if (!grouped.size) lines.push('', 'No change to the contract.');
  return `${lines.join('\n')}\n`;
}

/**
 * Runs the gate in the repository at `root` and returns its exit code.
 * @param {{ root: string, base?: string, reportPath: string, log?: (line: string) => void }} options
 */
export function runGate({ root, base: explicit, reportPath, log = console.log }) {
  const specDir = join(root, SPEC_DIR);
  const rootFile = join(specDir, rootOf(specDir));
  if (!existsSync(rootFile))
    throw new GateError(`${relative(root, rootFile)} is missing from the working tree`);
  const base = chooseBase(explicit, root);

  const work = mkdtempSync(join(tmpdir(), 'spec-diff-'));
  try {
    let baseBundle;
    let baseLabel = base.label;
    if (base.kind === 'released') {
      const file = join(root, RELEASED);
      if (!existsSync(file)) {
        const message = `No ${RELEASED}: nothing released to compare with, the gate passes (run \`pnpm spec:release\` to record the first release).`;
        writeReport(reportPath, `# API contract changes\n\n${message}\n`);
        log(`spec-diff: ${message}`);
        return 0;
      }
      baseBundle = JSON.parse(readFileSync(file, 'utf8'));
      baseLabel = `${base.label}, version ${baseBundle.info?.version ?? 'unknown'}`;
    } else {
      baseLabel = `${base.label} (${base.sha.slice(0, 12)})`;
      const tree = git(['ls-tree', '-r', '--name-only', base.sha, SPEC_DIR], root).text.split('\n');
      const baseDir = tree.some((f) => f.startsWith(`${SPEC_DIR}/`))
        ? extractSpec(base.sha, root, work)
        : undefined;
      if (!baseDir || !existsSync(join(baseDir, rootOf(baseDir)))) {
        const message = `No spec at the base ${baseLabel}: nothing to compare, the gate passes.`;
        writeReport(reportPath, `# API contract changes\n\n${message}\n`);
        log(`spec-diff: ${message}`);
        return 0;
      }
      baseBundle = bundleSpec(baseDir, join(work, 'base.json'));
    }
    const currentBundle = bundleSpec(specDir, join(work, 'current.json'));

    const map = new SourceMap(rootFile);
    const accepted = readAccepted(join(root, ACCEPTED));
    const changes = compareContracts(baseBundle, currentBundle).map((change) => {
      const at = map.locate(change.pointer);
      const location = `${relative(root, at.file)}:${at.line}:${at.column}`;
      return {
        ...change,
        location,
        accepted: change.class === 'breaking' ? acceptance(change, accepted) : undefined,
      };
    });
    const grouped = groupByOperation(changes);
    const distinct = [...grouped.values()].flat();
    const breaking = distinct.filter((c) => c.class === 'breaking');
    const open = breaking.filter((c) => !c.accepted);
    const counts = {
      breaking: breaking.length,
      accepted: breaking.length - open.length,
      deprecation: distinct.filter((c) => c.class === 'deprecation').length,
      additive: distinct.filter((c) => c.class === 'additive').length,
      operations: [...grouped.keys()].filter((op) => op !== '*').length,
    };
    const verdict = open.length
      ? `FAIL: ${open.length} breaking change${open.length === 1 ? '' : 's'} not recorded in ${ACCEPTED}`
      : breaking.length
        ? 'PASS: every breaking change is recorded with its reason'
        : 'PASS: no breaking change';
    const unused = accepted.filter((e) => !e.used);
    writeReport(reportPath, report({ baseLabel, verdict, grouped, counts, unused }));

    for (const c of distinct) {
      const note = c.accepted ? ' [recorded]' : '';
      log(`${c.location} ${c.class} ${c.kind} ${c.operation}: ${c.message} (${c.places.join('; ')})${note}`);
    }
    for (const e of unused) log(`spec-diff: ${ACCEPTED} entry \`${e.change}\` matched no change`);
    log(
      `spec-diff: ${baseLabel} → working tree: ${counts.breaking} breaking (${counts.accepted} recorded), ${counts.deprecation} deprecations, ${counts.additive} additive. ${verdict}. Report: ${relative(process.cwd(), reportPath) || reportPath}`,
    );
    return open.length ? 1 : 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
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
  const top = git(['rev-parse', '--show-toplevel'], cwd);
  // Outside a git checkout (an unpacked tarball) the repository is where this script lives.
  const root = top.ok ? top.text : resolve(fileURLToPath(new URL('..', import.meta.url)));
  const reportPath = resolve(cwd, values.report ?? join(root, 'reports', 'spec-diff.md'));
  return runGate({ root, base: positionals[0], reportPath });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main();
  } catch (error) {
    // Exit 2, not 1: a gate that could not run must not read as "breaking changes found".
    console.error(`spec-diff: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 2;
  }
}
