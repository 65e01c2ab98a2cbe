#!/usr/bin/env node
// `pnpm contract --base-url URL --key-file FILE`: the contract suite (test/contract.test.ts) against any
// implementation of the v1 API, every response validated against the bundled spec. Writes JUnit XML and a
// Markdown summary; exits 1 on any failed test (a contract violation), 2 on bad arguments.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
const jsonFile = join(out, 'results.json');
const { startVitest } = await import('vitest/node');
const vitest = await startVitest('test', ['test/contract.test.ts'], {
  root,
  watch: false,
  reporters: [
    'default',
    ['junit', { outputFile: join(out, 'junit.xml') }],
    ['json', { outputFile: jsonFile }],
  ],
});
await vitest?.close();

const results = JSON.parse(readFileSync(jsonFile, 'utf8'));
writeFileSync(join(out, 'summary.md'), summary(results));
process.stdout.write(`contract: ${join(out, 'junit.xml')}, ${join(out, 'summary.md')}\n`);
process.exit(results.success && results.numFailedTests === 0 && results.numTotalTests > 0 ? 0 : 1);

/** The Markdown summary: counts, then every failure with its first message line. */
function summary(results) {
  const tests = results.testResults.flatMap((file) => file.assertionResults);
  const failed = tests.filter((t) => t.status === 'failed');
  const lines = [
    `# Contract suite against ${baseUrl}`,
    '',
    `Target: ${values.mock ? 'mock' : 'server'}. ${results.numPassedTests} passed, ${results.numFailedTests} failed, ` +
      `${results.numPendingTests + results.numTodoTests} skipped (stateful tests on a mock), ${results.numTotalTests} in all.`,
    '',
    failed.length === 0 ? 'No contract violations.' : '| test | violation |',
  ];
  if (failed.length > 0) lines.push('| --- | --- |');
  for (const test of failed) {
    const message = (test.failureMessages?.[0] ?? '').split('\n')[0].replace(/\|/g, '\\|').slice(0, 300);
    lines.push(`| ${test.fullName.replace(/\|/g, '\\|')} | ${message} |`);
  }
  return `${lines.join('\n')}\n`;
}
