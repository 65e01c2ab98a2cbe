#!/usr/bin/env node
// `pnpm bench:prose`: how long `pnpm build` takes after a prose-only edit, and which tasks replayed.
//
//   node tools/bench-prose-build.mjs [--max-seconds 8]
//
// Edits `info.description` in spec/openapi.yaml (a unique marker appended), runs `pnpm build`, and
// restores the file byte for byte on exit, even on Ctrl-C. Before the edit it runs one `pnpm build`
// so that the measured run starts from a built tree. Prints the wall time, every task with its cache
// status, and exits 1 when the time is above --max-seconds or any TypeScript package was rebuilt
// (only @svc/spec#build and @svc/contract#generate are expected to run: they carry the prose).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseDocument } from 'yaml';

const { values } = parseArgs({ options: { 'max-seconds': { type: 'string', default: '8' } } });
const maxSeconds = Number(values['max-seconds']);
const root = fileURLToPath(new URL('..', import.meta.url));
const source = fileURLToPath(new URL('../spec/openapi.yaml', import.meta.url));
const bundleCopy = fileURLToPath(
  new URL('../packages/contract/dist/generated/openapi.json', import.meta.url),
);
/** The tasks a prose edit must run: the bundle and the copy of it that @svc/contract ships. */
const PROSE_TASKS = new Set(['@svc/spec#build', '@svc/contract#generate']);

/** Runs `pnpm build` with turbo's per-task cache lines and returns its output and wall time. */
function build() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('pnpm', ['build', '--output-logs=hash-only'], { cwd: root, env: process.env });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code === 0) resolve({ output, seconds });
      else reject(new Error(`pnpm build exited ${code}:\n${output}`));
    });
  });
}

/** `@svc/x:build: cache hit, …` lines → task id and status. */
function tasksOf(output) {
  const tasks = new Map();
  for (const match of output.matchAll(/^(@[\w/-]+):([\w:-]+): cache (hit|miss|bypass)/gm)) {
    tasks.set(`${match[1]}#${match[2]}`, match[3]);
  }
  return tasks;
}

const original = readFileSync(source);
let restored = false;
function restore() {
  if (restored) return;
  writeFileSync(source, original);
  restored = true;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    restore();
    process.exit(130);
  });
}

try {
  console.log('bench:prose: warming up (pnpm build on the unedited tree)…');
  await build();

  const marker = `Prose benchmark ${Date.now().toString(36)}.`;
  const document = parseDocument(original.toString('utf8'));
  document.setIn(['info', 'description'], `${document.getIn(['info', 'description'])}\n${marker}\n`);
  writeFileSync(source, document.toString());
  console.log(`bench:prose: appended "${marker}" to info.description in spec/openapi.yaml`);

  const { output, seconds } = await build();
  const tasks = tasksOf(output);
  const rebuiltTs = [...tasks].filter(([task, status]) => status !== 'hit' && !PROSE_TASKS.has(task));
  const shipped = readFileSync(bundleCopy, 'utf8').includes(marker);
  for (const [task, status] of tasks)
    console.log(`  ${status === 'hit' ? 'cache hit ' : 'cache miss'}  ${task}`);
  console.log(`bench:prose: @svc/contract ships the edited description: ${shipped ? 'yes' : 'NO'}`);
  console.log(
    `bench:prose: pnpm build after a prose-only edit: ${seconds.toFixed(2)} s (limit ${maxSeconds} s), ` +
      `${[...tasks.values()].filter((s) => s === 'hit').length}/${tasks.size} tasks from cache ` +
      `(load average ${loadavg()[0].toFixed(1)} on this machine)`,
  );
  const failures = [];
  if (seconds > maxSeconds) failures.push(`took ${seconds.toFixed(2)} s`);
  if (rebuiltTs.length) failures.push(`rebuilt ${rebuiltTs.map(([t]) => t).join(', ')}`);
  if (!shipped) failures.push('the bundle @svc/contract ships lacks the edit');
  if (failures.length) {
    console.error(`bench:prose: FAILED: ${failures.join('; ')}`);
    process.exitCode = 1;
  }
} finally {
  restore();
  // Back to the unedited outputs (spec/dist, the contract's copy); every task is a cache hit here.
  await build().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
