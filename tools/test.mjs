#!/usr/bin/env node
// `pnpm test`: every package's lint and test task through turbo, then one closing line that adds up
// what each vitest run reported ("N passed, N failed, N skipped"), replayed cache logs included.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = ['run', 'lint', 'test', ...process.argv.slice(2)];
const bin = fileURLToPath(new URL('../node_modules/.bin/turbo', import.meta.url));
const turbo = spawn(bin, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FORCE_COLOR: '0' } });

const totals = { passed: 0, failed: 0, skipped: 0 };
let pending = '';
// vitest's summary line, e.g. "@svc/client:test:       Tests  2 failed | 73 passed | 1 skipped (76)"
const summary = /\bTests\s+((?:\d+ (?:failed|passed|skipped|todo)\s*\|?\s*)+)\(\d+\)/;

function count(line) {
  const found = summary.exec(line.replace(/\x1b\[[0-9;]*m/g, ''));
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
  process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
  process.exit(code ?? 1);
});
