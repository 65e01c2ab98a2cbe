// `pnpm contract --base-url URL …` (bin/contract.mjs) against four targets: the Prism mock and our
// built server must pass, the server as shipped too, its webhook delivery checks reported skipped with
// the reason (it refuses the suite's loopback receiver); a server that answers `200 {}` to everything
// must fail with a report. Runs in the default (mock) run only.
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

/** A port free now on 127.0.0.1 (bound and released: the receiver takes it a moment later). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
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

  it('passes against the built server with its key file, deliveries to the receiver URL it is given', async () => {
    // The server allows loopback receivers here, so `--webhook-receiver-url` can name the suite's own
    // receiver on the port `--webhook-receiver-port` gives it: every delivery check runs. Write-back's
    // endpoints deliver nowhere: their deliveries end after one immediate retry (not a day's schedule).
    const server = await spawnServer({
      env: { SVC_SIM_STEP_MS: '50', SVC_WEBHOOK_RETRY_SCHEDULE: '0', SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true' },
    });
    const port = await freePort();
    try {
      const { code, out, output } = await contract([
        '--base-url',
        server.baseUrl,
        '--key-file',
        server.keyFilePath,
        '--webhook-receiver-url',
        `http://127.0.0.1:${port}/deliveries`,
        '--webhook-receiver-port',
        String(port),
      ]);
      expect(code, output.slice(-3000)).toBe(0);
      expect(report(out).summary).toMatch(/Target: server\. \d+ passed, 0 failed, 0 skipped/);
      expect(report(out).junit).toMatch(/<testsuites [^>]*failures="0" errors="0" skipped="0"/);
    } finally {
      await server.close();
    }
  }, 240_000);

  it('passes against the built server as shipped, the delivery checks skipped with the reason', async () => {
    // As shipped (`node packages/server/dist/main.js`, PGlite in a data dir): no
    // SVC_WEBHOOKS_ALLOW_LOOPBACK, so the suite's loopback receiver is refused (400 invalid_argument on
    // `url`). Rate limits are off, as in every server run here: the suite's own pace is not under test.
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-shipped-'));
    dirs.push(dataDir);
    const server = await spawnServer({ args: [], env: { SVC_DATA_DIR: dataDir } });
    try {
      const { code, out, output } = await contract([
        '--base-url',
        server.baseUrl,
        '--key-file',
        server.keyFilePath,
      ]);
      expect(code, output.slice(-3000)).toBe(0);
      const { junit, summary } = report(out);
      expect(summary).toMatch(/Target: server\. \d+ passed, 0 failed, 2 skipped/);
      expect(junit).toMatch(/<testsuites [^>]*failures="0" errors="0" skipped="2"/);
      const reason =
        /refused http:\/\/127\.0\.0\.1:\d+\/hook \(400 invalid_argument, url: [^)]+\)\. .*SVC_WEBHOOKS_ALLOW_LOOPBACK=true.*--webhook-receiver-url/;
      for (const test of ['redeliverWebhookDelivery sends', 'a computer created is delivered']) {
        expect(summary).toMatch(new RegExp(`\\| [^|]*${test}[^|]* \\| [^|]*${reason.source}`));
        expect(junit).toMatch(
          new RegExp(`name="[^"]*${test}[^"]*"[^>]*>\\s*<skipped message="[^"]*${reason.source}`),
        );
      }
      expect(output).toMatch(
        /not exercised, its test skipped: redeliverWebhookDelivery: no webhook receiver/,
      );
    } finally {
      await server.close();
    }
  }, 300_000);

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
    [
      ['--base-url', 'http://127.0.0.1:1/v1', '--token', 't', '--webhook-receiver-url', 'https://x.example'],
      /needs --webhook-receiver-port/,
    ],
    [['--base-url', 'http://127.0.0.1:1', '--mock', '--webhook-receiver-port', '8099'], /are for a server/],
    [['--base-url', 'http://127.0.0.1:1/v1'], /exactly one of/],
    [['--base-url', 'http://127.0.0.1:1/v1', '--mock', '--token', 't'], /exactly one of/],
  ])('exits 2 on bad arguments %j', async (args, message) => {
    const { code, output } = await contract(args);
    expect(code).toBe(2);
    expect(output).toMatch(message);
  });
});
