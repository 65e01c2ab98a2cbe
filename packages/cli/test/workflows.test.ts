// The Arazzo journeys of spec/workflows, run by `redocly respect` against the real server (the built
// `svc-server --sandbox`), with the credentials `svc` prints: `svc auth assertion` for the journey that
// exchanges an assertion itself, `svc token` for the others. Needs the server built (turbo builds it
// before this package's tests: @svc/server is a devDependency).

import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServerProcess, spawnServer } from '@svc/tools/server-process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const BIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const WORKFLOWS = fileURLToPath(new URL('../../../spec/workflows/', import.meta.url));
// Redocly is @svc/tools' dependency: resolve it from there.
const fromTools = createRequire(createRequire(import.meta.url).resolve('@svc/tools/server-process'));
const REDOCLY = join(dirname(fromTools.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

function respect(file: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [REDOCLY, 'respect', file, ...args], {
      // No usage report and no update check against the registry.
      env: {
        ...process.env,
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the Arazzo journeys against the real server, with svc auth assertion', () => {
  let server: ServerProcess;
  let dir: string;
  beforeAll(async () => {
    server = await spawnServer();
    dir = mkdtempSync(join(tmpdir(), 'svc-respect-'));
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server?.close();
  });

  const files = readdirSync(WORKFLOWS).filter((name) => name.endsWith('.arazzo.yaml'));

  test('there are journeys to run', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  test.each(files)(
    '%s: every workflow succeeds',
    async (file) => {
      const svc = (...args: string[]) =>
        execFileSync(process.execPath, [BIN, ...args], {
          env: { PATH: process.env.PATH, SVC_CONFIG_DIR: dir, SVC_KEY_FILE: server.keyFilePath },
          encoding: 'utf8',
        }).trim();
      const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
      const inputs = {
        assertion: svc('auth', 'assertion'),
        token: svc('token'),
        workspaceName: unique('journey'),
        computerName: unique('box'),
        workspaceKey: randomUUID(),
        computerKey: randomUUID(),
        idempotencyKey: randomUUID(),
      };
      const report = join(dir, `${file}.json`);
      const args = ['--server', `api=${server.baseUrl}`, '--json-output', report];
      for (const [name, value] of Object.entries(inputs)) args.push('--input', `${name}=${value}`);
      const { code, output } = await respect(join(WORKFLOWS, file), args);
      expect(code, output).toBe(0);
      const result = JSON.parse(readFileSync(report, 'utf8')) as {
        files: Record<string, { executedWorkflows: { workflowId: string; status: string }[] }>;
      };
      const workflows = Object.values(result.files).flatMap((f) => f.executedWorkflows);
      expect(workflows.length).toBeGreaterThan(0);
      for (const workflow of workflows) expect(workflow.status, workflow.workflowId).toBe('success');
    },
    120_000,
  );
});
