// The README runs as written: every console block of README.md marked with MARKER is run, command by
// command, as a reader would type it — each `$ ` line through /bin/sh in a fresh directory, with the
// `svc` that `pnpm cli:install` installs (packed, npm-installed) first on PATH — against a freshly
// started server as `SVC_DRIVER=docker pnpm start` runs it (dist/main.js; PGlite in that directory, the
// bootstrap key file at .svc/bootstrap-key.json). A command fails the test when its shell exits non-zero
// (the README shows an expected failure with `; echo "exit $?"`) or when what it printed, stdout and
// stderr together, differs from the lines the README shows under it by matchOutput's rule
// (test/support/readme.ts): ids match any id, `…` in a line any text, a line of `…` any lines.
//
// Without a Docker Engine or the busybox image (`pnpm images:build`) it is skipped, saying so, unless
// CI=true: then it fails, because CI must run the README.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDocument } from '@svc/contract';
import { childEnv } from '@svc/tools/child-process';
import { type ServerProcess, serverBuilt, spawnServer } from '@svc/tools/server-process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type InstalledCli, installPacked, PACKAGE } from '../support/installed.js';
import { type ConsoleStep, consoleSteps, matchOutput, readmeSteps } from '../support/readme.js';

/**
 * What the line above each block this file runs says, in an HTML comment (`<!-- … -->`). It may add
 * `; needs <image>`: an image of `pnpm images:build` beside busybox that the block's computers run.
 */
const MARKER = 'run as written by packages/cli/test/installed/readme.test.ts';
/** The image behind the catalogue's `busybox` on the Docker driver (tools/images/busybox.sh). */
const BUSYBOX = 'svc/busybox:1';
const SOCKET = process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock';
const ID = new RegExp(
  (loadDocument().components?.schemas?.Id as { pattern: string } | undefined)?.pattern ?? '$^',
);

/** A GET of the Engine API on its socket: the status, or 0 when nothing answers. */
function engine(path: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ socketPath: SOCKET, path, method, timeout: 3000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

const imageMissing = async (image: string) =>
  (await engine(`/images/${encodeURIComponent(image)}/json`)).status !== 200;

async function dockerReason(): Promise<string> {
  if ((await engine('/_ping')).status !== 200) return `no Docker Engine at ${SOCKET}`;
  if (await imageMissing(BUSYBOX)) return `the image ${BUSYBOX} is missing (pnpm images:build)`;
  return '';
}

const built = existsSync(join(PACKAGE, 'dist', 'main.js')) && serverBuilt();
if (!built && process.env.CI)
  throw new Error('the README cannot be run under CI: build the CLI and the server first');
const reason = built ? await dockerReason() : 'the CLI or the server is not built';
if (reason && process.env.CI) throw new Error(`the README cannot be run under CI: ${reason}`);
if (reason) console.warn(`skipping the README's run: ${reason} (CI=true fails instead)`);

test.each<[string, { shown: string[]; printed: string; want: 'match' | 'differ' }]>([
  ['the same lines', { shown: ['hello'], printed: 'hello\n', want: 'match' }],
  ['another line', { shown: ['hello'], printed: 'hullo\n', want: 'differ' }],
  ['a line more', { shown: ['hello'], printed: 'hello\nworld\n', want: 'differ' }],
  [
    'an id for an id',
    { shown: ['id 01m8585vcd9xec2pzyz2ymbkw5h'], printed: 'id 01m98ar265a1wvd9x0jgxxr1jtp', want: 'match' },
  ],
  ['a name for an id', { shown: ['id 01m8585vcd9xec2pzyz2ymbkw5h'], printed: 'id box-1', want: 'differ' }],
  [
    '… within a line',
    { shown: ['Linux box-1 … GNU/Linux'], printed: 'Linux box-1 6.12 x86_64 GNU/Linux', want: 'match' },
  ],
  [
    '… within a line, not across',
    { shown: ['Linux … GNU/Linux'], printed: 'Linux\nGNU/Linux', want: 'differ' },
  ],
  ['a line of … for lines', { shown: ['a', '…', 'z'], printed: 'a\nb\nc\nz\n', want: 'match' }],
  ['a line of … for none', { shown: ['a', '…', 'z'], printed: 'a\nz\n', want: 'match' }],
  ['nothing for nothing', { shown: [], printed: '', want: 'match' }],
  ['nothing shown, something printed', { shown: [], printed: 'noise\n', want: 'differ' }],
])('the matching rule: %s', (_name, { shown, printed, want }) => {
  expect(matchOutput(shown, printed, ID) === undefined ? 'match' : 'differ').toBe(want);
});

test('the marker finds console blocks and their steps', () => {
  const markdown = ['x', `<!-- ${MARKER} -->`, '', '```console', '$ echo a', 'a', '$ true', '```'].join('\n');
  expect(consoleSteps(markdown, MARKER)).toEqual([
    {
      marker: `<!-- ${MARKER} -->`,
      steps: [
        { command: 'echo a', output: ['a'], line: 5 },
        { command: 'true', output: [], line: 7 },
      ],
    },
  ]);
  expect(() => consoleSteps('no marker here', MARKER)).toThrow(/no line with/);
});

/** Runs one README line through sh in `cwd` after the block's earlier `export`s: exit code and output. */
function runLine(
  step: ConsoleStep,
  exports: readonly string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; printed: string }> {
  return new Promise((resolve, reject) => {
    // One stream for both, as a terminal shows them: the order in which they were written.
    const script = ['exec 2>&1', ...exports, step.command].join('\n');
    const child = spawn('/bin/sh', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, printed });
    });
  });
}

// A block's own image, when missing, skips that block (and fails under CI), as the busybox image does all.
const blocks = await Promise.all(
  (reason ? [] : readmeSteps(MARKER)).map(async (block) => {
    const needs = /; needs (\S+)/.exec(block.marker)?.[1];
    const missing = needs !== undefined && (await imageMissing(needs)) ? needs : undefined;
    if (missing && process.env.CI)
      throw new Error(`the README cannot be run under CI: ${missing} is missing`);
    if (missing) console.warn(`skipping a README block: the image ${missing} is missing (pnpm images:build)`);
    return { ...block, missing };
  }),
);

describe.skipIf(reason !== '')('README.md, run as written (SVC_DRIVER=docker)', () => {
  const instance = `readme-${Date.now().toString(36)}`;
  let cli: InstalledCli;
  let server: ServerProcess;
  let dir: string;
  let env: Record<string, string>;
  const exports: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-readme-'));
    mkdirSync(join(dir, '.svc'), { mode: 0o700 });
    [cli, server] = await Promise.all([
      installPacked(),
      // `pnpm start` with the Docker driver, its files where a reader's would be, on a free port.
      spawnServer({
        args: [],
        // A first start (PGlite's files, the owner's password hashed) beside the install, on two shared cores.
        startTimeoutMs: 150_000,
        env: {
          SVC_DRIVER: 'docker',
          SVC_DOCKER_SOCKET: SOCKET,
          SVC_DOCKER_INSTANCE: instance,
          SVC_DATA_DIR: join(dir, '.svc', 'data'),
          SVC_BOOTSTRAP_KEY_FILE: join(dir, '.svc', 'bootstrap-key.json'),
        },
      }),
    ]);
    // A reader's shell: svc on PATH, a home of its own; nothing of this process's SVC_* settings.
    env = childEnv({
      HOME: dir,
      SVC_CONFIG_DIR: join(dir, 'config'),
      PATH: `${join(cli.prefix, 'bin')}:${process.env.PATH ?? ''}`,
    });
  }, 240_000);

  afterAll(async () => {
    await Promise.all([cli?.remove(), server?.close()]);
    // The containers of this run's computers, and only those (by the instance label the server gave them).
    const filters = encodeURIComponent(JSON.stringify({ label: [`svc.instance=${instance}`] }));
    const listed = await engine(`/containers/json?all=1&filters=${filters}`);
    for (const { Id } of listed.status === 200 ? (JSON.parse(listed.body) as { Id: string }[]) : [])
      await engine(`/containers/${Id}?force=1&v=1`, 'DELETE');
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  for (const [at, { steps, missing }] of blocks.entries())
    for (const step of steps)
      test.skipIf(missing !== undefined)(
        `block ${at + 1}, README.md:${step.line}: $ ${step.command}`,
        async () => {
          const { code, printed } = await runLine(step, exports, dir, env);
          if (/^export \w+=/.test(step.command)) exports.push(step.command);
          const context = `README.md:${step.line}: $ ${step.command}\n--- printed ---\n${printed}`;
          expect(code, `it exited ${code}\n${context}`).toBe(0);
          expect(matchOutput(step.output, printed, ID), context).toBeUndefined();
        },
        130_000,
      );
});
