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
                     [--webhook-receiver-url URL --webhook-receiver-port PORT]
  --base-url   the API base address, ending in /v1 for a server (a Prism mock serves without /v1)
  --key-file   a service-account key file of the target (the suite signs in with it)
  --token      an access token instead of a key file
  --mock       the target is a mock (any token is accepted; stateful tests are listed, not run)
  --out        where junit.xml and summary.md go (default: reports/contract)
  --webhook-receiver-url   a URL the server accepts for webhook deliveries (https, public) that forwards
               to this machine's --webhook-receiver-port (a tunnel, a TLS proxy); without it the suite's
               receiver is at http://127.0.0.1:<port>/hook, which a server refuses unless it runs with
               SVC_WEBHOOKS_ALLOW_LOOPBACK=true, and the delivery checks are then skipped, saying why
  --webhook-receiver-port  the port the suite's receiver listens on, on 127.0.0.1 (default: any free one)`;

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
      'webhook-receiver-url': { type: 'string' },
      'webhook-receiver-port': { type: 'string' },
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
const receiverUrl = values['webhook-receiver-url'];
const receiverPort = values['webhook-receiver-port'];
if (receiverUrl !== undefined && !/^https?:\/\//.test(receiverUrl))
  fail('--webhook-receiver-url must be an http(s) URL');
if (receiverPort !== undefined && !/^\d{1,5}$/.test(receiverPort))
  fail('--webhook-receiver-port must be a port');
if (receiverUrl !== undefined && receiverPort === undefined)
  fail('--webhook-receiver-url needs --webhook-receiver-port: the port its requests are forwarded to');
if (values.mock && (receiverUrl ?? receiverPort) !== undefined)
  fail('--webhook-receiver-url and --webhook-receiver-port are for a server: a mock sends no deliveries');

// Paths are the caller's: pnpm runs root scripts from the repository root, INIT_CWD is where it was called.
const here = process.env.INIT_CWD ?? process.cwd();
const out = resolve(here, values.out);
mkdirSync(out, { recursive: true });
process.env.CONTRACT_TARGET = values.mock ? 'mock' : 'server';
process.env.CONTRACT_BASE_URL = baseUrl;
if (values['key-file']) process.env.CONTRACT_KEY_FILE = resolve(here, values['key-file']);
if (values.token) process.env.CONTRACT_TOKEN = values.token;
if (receiverUrl) process.env.CONTRACT_WEBHOOK_RECEIVER_URL = receiverUrl;
if (receiverPort) process.env.CONTRACT_WEBHOOK_RECEIVER_PORT = receiverPort;

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
