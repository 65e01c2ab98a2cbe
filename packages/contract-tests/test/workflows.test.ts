// Runs spec/workflows/*.arazzo.yaml with `redocly respect` against the target (the suite's Prism by default).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@svc/client/node';
import { expect, it } from 'vitest';
import { signAssertion } from './support/assertion.js';
import { key } from './support/fixtures.js';
import { credentials, mockKeyFile, uniqueName } from './support/harness.js';
import { baseUrl, onMock } from './support/target.js';

const require = createRequire(import.meta.url);
const WORKFLOWS = fileURLToPath(new URL('../../../spec/workflows/journeys.arazzo.yaml', import.meta.url));
const REDOCLY = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

interface RespectReport {
  files: Record<
    string,
    { totalRequests: number; executedWorkflows: { workflowId: string; status: string }[] }
  >;
}

function respect(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // Verified in @redocly/cli 2.77.0: REDOCLY_TELEMETRY=off stops usage data (besides `telemetry: off` in
    // redocly.yaml); REDOCLY_SUPPRESS_UPDATE_NOTICE=true stops the version check against the registry.
    const env = {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      NO_COLOR: '1',
    };
    const child = spawn(process.execPath, [REDOCLY, 'respect', WORKFLOWS, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.on('close', (code) => resolve({ code, output }));
  });
}

it('every Arazzo journey passes with redocly respect', async () => {
  const base = baseUrl();
  const keyFile = onMock ? mockKeyFile(base) : credentials().keyFile;
  expect(keyFile, 'the journeys against a server need CONTRACT_KEY_FILE').toBeDefined();
  const token = await createClient({ baseUrl: base, keyFile: keyFile!, retry: false }).accessToken();
  const dir = mkdtempSync(join(tmpdir(), 'svc-respect-'));
  try {
    const inputs = {
      assertion: signAssertion(keyFile!, `${base}/auth/token`),
      token: token!,
      workspaceName: uniqueName('journey'),
      computerName: uniqueName('box'),
      workspaceKey: key(),
      computerKey: key(),
      idempotencyKey: key(),
    };
    const report = join(dir, 'respect.json');
    const args = ['--server', `api=${base}`, '--json-output', report];
    for (const [name, value] of Object.entries(inputs)) args.push('--input', `${name}=${value}`);
    const { code, output } = await respect(args);
    expect(code, output).toBe(0);
    const result = JSON.parse(readFileSync(report, 'utf8')) as RespectReport;
    const workflows = Object.values(result.files).flatMap((f) => f.executedWorkflows);
    expect(workflows.map((w) => w.workflowId).sort()).toEqual([
      'computerLifecycle',
      'idempotentRetry',
      'pageThroughWorkspaces',
    ]);
    for (const workflow of workflows) expect(workflow.status, workflow.workflowId).toBe('success');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
