#!/usr/bin/env node
// `pnpm test`: Biome, then every package's lint and test task through turbo, then one closing line that adds up
// what each vitest run reported ("N passed, N failed, N skipped"), replayed cache logs included.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

// `check` is Biome over the whole repository (the root's own task); `lint` the spec; `gate` the spec's
// breaking-change gate (docs/compatibility.md); `typecheck` every package's sources and tests with tsc
// (a build compiles only the sources); `test` everything.
const args = ['run', 'check', 'lint', 'gate', 'typecheck', 'test', ...process.argv.slice(2)];
const bin = fileURLToPath(new URL('../node_modules/.bin/turbo', import.meta.url));
const turbo = spawn(bin, args, {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0' },
});

const totals = { passed: 0, failed: 0, skipped: 0 };
let pending = '';
// vitest's summary line, e.g. "@svc/client:test:       Tests  2 failed | 73 passed | 1 skipped (76)"
const summary = /\bTests\s+((?:\d+ (?:failed|passed|skipped|todo)\s*\|?\s*)+)\(\d+\)/;

// A file that fails before its tests run (an error in a hook or at import) is a failure too, though
// vitest's "Tests" line does not count it: "Failed Suites 1".
const failedSuites = /\bFailed Suites (\d+)/;

function count(line) {
  const plain = stripVTControlCharacters(line);
  const suites = failedSuites.exec(plain);
  if (suites) totals.failed += Number(suites[1]);
  const found = summary.exec(plain);
  if (!found) return;
  for (const [, n, kind] of found[1].matchAll(/(\d+) (failed|passed|skipped|todo)/g)) {
    totals[kind === 'todo' ? 'skipped' : kind] += Number(n);
  }
}

turbo.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk.toString()).split('\n');
  pending = lines.pop() ?? '';
  lines.forEach(count);
});

turbo.on('close', (code) => {
  count(pending);
  process.stdout.write(
    `\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`,
  );
  process.exit(code ?? 1);
});
