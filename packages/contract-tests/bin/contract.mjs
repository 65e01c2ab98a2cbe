#!/usr/bin/env node
// `pnpm contract --base-url URL --key-file FILE`: the contract suite (test/contract.test.ts) against any
// implementation of the v1 API, every response validated against the bundled spec. Writes JUnit XML and a
// Markdown summary (src/report.ts), skipped tests with their reasons; exits 1 on any failed test (a
// contract violation), 2 on bad arguments.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const USAGE = `usage: pnpm contract --base-url URL (--key-file FILE | --token TOKEN | --mock) [--out DIR]
  --base-url   the API base address, ending in /v1 for a server (a Prism mock serves without /v1)
  --key-file   a service-account key file of the target (the suite signs in with it)
  --token      an access token instead of a key file
  --mock       the target is a mock (any token is accepted; stateful tests are listed, not run)
  --out        where junit.xml and summary.md go (default: reports/contract)`;

const fail = (message) => {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
};

let values;
try {
  ({ values } = parseArgs({
    options: {
      'base-url': { type: 'string' },
      'key-file': { type: 'string' },
      token: { type: 'string' },
      mock: { type: 'boolean', default: false },
      out: { type: 'string', default: 'reports/contract' },
      help: { type: 'boolean', default: false },
    },
  }));
} catch (error) {
  fail(error.message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const baseUrl = values['base-url'];
if (!baseUrl || !URL.canParse(baseUrl)) fail('--base-url must be an http(s) URL');
const credentials = [values['key-file'], values.token, values.mock || undefined].filter(Boolean);
if (credentials.length !== 1) fail('give exactly one of --key-file, --token, --mock');

// Paths are the caller's: pnpm runs root scripts from the repository root, INIT_CWD is where it was called.
const here = process.env.INIT_CWD ?? process.cwd();
const out = resolve(here, values.out);
mkdirSync(out, { recursive: true });
process.env.CONTRACT_TARGET = values.mock ? 'mock' : 'server';
process.env.CONTRACT_BASE_URL = baseUrl;
if (values['key-file']) process.env.CONTRACT_KEY_FILE = resolve(here, values['key-file']);
if (values.token) process.env.CONTRACT_TOKEN = values.token;

const root = fileURLToPath(new URL('..', import.meta.url));
const { ContractReporter } = await import('../dist/report.js');
const reporter = new ContractReporter({
  out,
  baseUrl,
  target: values.mock ? 'mock' : 'server',
  root,
});
const { startVitest } = await import('vitest/node');
const vitest = await startVitest('test', ['test/contract.test.ts'], {
  root,
  watch: false,
  reporters: ['default', reporter],
});
await vitest?.close();

const outcome = reporter.outcome;
process.stdout.write(`contract: ${join(out, 'junit.xml')}, ${join(out, 'summary.md')}\n`);
const total = outcome ? outcome.passed + outcome.failed + outcome.skipped : 0;
process.exit(outcome && outcome.failed === 0 && outcome.errors === 0 && total > 0 ? 0 : 1);
