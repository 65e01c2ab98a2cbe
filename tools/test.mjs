#!/usr/bin/env node
// `pnpm test`: Biome, then every package's lint and test task through turbo, then one closing line that adds up
// what each vitest run reported ("N passed, N failed, N skipped"), replayed cache logs included.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

// `check` is Biome over the whole repository (the root's own task); `lint` the spec; `gate` the spec's
// breaking-change gate (docs/compatibility.md); `typecheck` every package's sources and tests with tsc
// (a build compiles only the sources); `test` everything.
// `--summarize` writes the run's summary (.turbo/runs/), from which the slowest tasks are printed at the end:
// where CI's time goes, in every run's own log.
const args = ['run', 'check', 'lint', 'gate', 'typecheck', 'test', '--summarize', ...process.argv.slice(2)];
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

/** The slowest tasks of the run turbo just summarised, as lines of "seconds task (cache)". */
function slowestTasks(limit = 12) {
  try {
    const dir = fileURLToPath(new URL('../.turbo/runs/', import.meta.url));
    const newest = readdirSync(dir)
      .filter((file) => file.endsWith('.json'))
      .sort()
      .at(-1);
    if (!newest) return [];
    const summary = JSON.parse(readFileSync(`${dir}${newest}`, 'utf8'));
    return summary.tasks
      .map((task) => ({
        id: task.taskId,
        seconds: (task.execution.endTime - task.execution.startTime) / 1000,
        cache: task.cache?.status === 'HIT' ? 'cached' : 'ran',
      }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, limit)
      .map((task) => `${task.seconds.toFixed(1).padStart(7)} s  ${task.id} (${task.cache})`);
  } catch {
    return [];
  }
}

turbo.on('close', (code) => {
  count(pending);
  const slowest = slowestTasks();
  if (slowest.length > 0) process.stdout.write(`\nslowest tasks:\n${slowest.join('\n')}\n`);
  process.stdout.write(
    `\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`,
  );
  process.exit(code ?? 1);
});
