// `pnpm contract --base-url URL …` (bin/contract.mjs) against three targets: the Prism mock and our
// built server must pass; a server that answers `200 {}` to everything must fail with a report. Runs in
// the default (mock) run only.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer } from '@svc/tools/server-process';
import { afterAll, describe, expect, it } from 'vitest';
import { startPrism } from '../../src/prism.js';

const command = fileURLToPath(new URL('../../bin/contract.mjs', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs the command; resolves with its exit code and the report directory. */
function contract(args: string[]): Promise<{ code: number; out: string; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'svc-contract-'));
  dirs.push(out);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [command, ...args, '--out', out],
      // The child decides its target from its arguments alone, not from this run's environment.
      {
        env: {
          ...process.env,
          CONTRACT_TARGET: '',
          CONTRACT_BASE_URL: '',
          CONTRACT_KEY_FILE: '',
          INIT_CWD: '',
        },
        timeout: 240_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, out, output: `${stdout}${stderr}` }),
    );
  });
}

const report = (out: string) => ({
  junit: readFileSync(join(out, 'junit.xml'), 'utf8'),
  summary: readFileSync(join(out, 'summary.md'), 'utf8'),
});

describe('pnpm contract', () => {
  it('passes against the Prism mock and writes JUnit XML and a Markdown summary', async () => {
    const prism = await startPrism();
    try {
      const { code, out, output } = await contract(['--base-url', prism.baseUrl, '--mock']);
      expect(code, output).toBe(0);
      const { junit, summary } = report(out);
      expect(junit).toMatch(/<testsuites [^>]*failures="0"/);
      expect(summary).toMatch(/Target: mock\. \d+ passed, 0 failed/);
    } finally {
      await prism.stop();
    }
  }, 120_000);

  it('passes against the built server with its key file', async () => {
    // The webhooks suite redelivers a sample delivery once it has ended: with no receiver to reach, it
    // ends after one immediate retry here (the default schedule retries for about a day).
    const server = await spawnServer({
      env: { SVC_SIM_STEP_MS: '50', SVC_WEBHOOK_RETRY_SCHEDULE: '0', SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true' },
    });
    try {
      const { code, out, output } = await contract([
        '--base-url',
        server.baseUrl,
        '--key-file',
        server.keyFilePath,
      ]);
      expect(code, output.slice(-3000)).toBe(0);
      expect(report(out).summary).toMatch(/Target: server\. \d+ passed, 0 failed, 0 skipped/);
    } finally {
      await server.close();
    }
  }, 240_000);

  it('fails, with the violations in the summary, against a server that breaks the contract', async () => {
    const liar = createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    const { port } = liar.address() as { port: number };
    try {
      const { code, out } = await contract(['--base-url', `http://127.0.0.1:${port}/v1`, '--token', 'x']);
      expect(code).toBe(1);
      const { junit, summary } = report(out);
      expect(junit).toMatch(/<failure /);
      expect(summary).toMatch(/\| test \| violation \|/);
      expect(summary).toMatch(/ [1-9]\d* failed/);
    } finally {
      await new Promise((resolve) => liar.close(resolve));
    }
  }, 120_000);

  it.each([
    [['--mock'], /--base-url must be/],
    [['--base-url', 'http://127.0.0.1:1/v1'], /exactly one of/],
    [['--base-url', 'http://127.0.0.1:1/v1', '--mock', '--token', 't'], /exactly one of/],
  ])('exits 2 on bad arguments %j', async (args, message) => {
    const { code, output } = await contract(args);
    expect(code).toBe(2);
    expect(output).toMatch(message);
  });
});
