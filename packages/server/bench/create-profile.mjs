// Where a create's milliseconds go, statement by statement: the built server at production defaults
// (plus the settings bench/living.mjs names: unrefusing rate limits, a large quota, loopback webhooks;
// a webhook endpoint on the workspace, so the outbox is on), traced with OpenTelemetry into a receiver
// of this script's on 127.0.0.1, under the creates load of bench/living.mjs (bench/load.mjs in its own
// process: `--connections` at once for `--duration` s). For every traced `POST createComputer` that
// answered 202, it sums its spans: each statement outside a transaction, each inside it, the commit
// (the transaction's time after its last statement: the deferred event triggers, the quota, the
// WAL flush), the wait for a pool connection and the gaps between statements (inside the transaction,
// time not in a statement), and everything outside the database (auth, validation, rendering, the log
// line, the event loop's queue). Tracing costs time of its own: the figures are a profile, not the
// throughput, which bench/living.mjs measures untraced.
//
//   node packages/server/bench/create-profile.mjs [--engine postgres|pglite] [--connections 16] [--duration 5]

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stopChild } from '@svc/tools/child-process';
import { createTestDatabase } from '@svc/tools/postgres';
import { api, bootstrapToken, startServer } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    engine: { type: 'string', default: 'postgres' },
    connections: { type: 'string', default: '16' },
    duration: { type: 'string', default: '5' },
  },
});

/** An OTLP/HTTP (JSON) receiver on 127.0.0.1 that keeps every span it is sent. */
async function startCollector() {
  const spans = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('error', () => {});
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resource of body.resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      } catch {
        // Not JSON: not a span this profile can read.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    spans,
    close: () => new Promise((r) => server.close(r)),
  };
}

const ms = (span) => Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6;
const attribute = (span, key) => span.attributes?.find((a) => a.key === key)?.value;

const collector = await startCollector();
const dir = mkdtempSync(join(tmpdir(), 'svc-create-profile-'));
const database =
  values.engine === 'postgres' ? await createTestDatabase({ prefix: 'svc_profile' }) : undefined;
let server;
try {
  server = await startServer({
    HOST: '127.0.0.1',
    PORT: '0',
    SVC_DATA_DIR: join(dir, 'data'),
    SVC_BOOTSTRAP_KEY_FILE: join(dir, 'key.json'),
    DATABASE_URL: database?.url ?? '',
    SVC_RATE_LIMITS: 'principal=1000000000/60,workspace_mutations=1000000000/60',
    SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '1000000',
    SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_MAX_QUEUE_SIZE: '1000000',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5000',
    OTEL_BSP_SCHEDULE_DELAY: '500',
  });
  const token = await bootstrapToken(server.url, join(dir, 'key.json'));
  const ws = await api(server.url, token, 'POST', '/v1/workspaces', { name: 'profile' });
  const path = `/v1/workspaces/${ws.body.workspace.id}`;
  await api(server.url, token, 'POST', `${path}/webhook-endpoints`, {
    url: `${collector.url}/hooks`,
    event_types: ['*'],
  });
  const result = await new Promise((resolve, reject) => {
    const options = {
      url: `${server.url}${path}/computers`,
      headers: { authorization: `Bearer ${token}` },
      connections: Number(values.connections),
      duration: Number(values.duration),
      create: { name: 'profile' },
    };
    const child = spawn(process.execPath, [join(here, 'load.mjs'), JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`load ${code}`)),
    );
  });
  await new Promise((resolve) => setTimeout(resolve, 2000)); // the last batches
  // Group by trace: the create's server span and everything under it.
  const byTrace = new Map();
  for (const span of collector.spans) {
    if (!byTrace.has(span.traceId)) byTrace.set(span.traceId, []);
    byTrace.get(span.traceId).push(span);
  }
  const totals = new Map();
  let creates = 0;
  let requestMs = 0;
  const add = (name, value) => totals.set(name, (totals.get(name) ?? 0) + value);
  for (const spans of byTrace.values()) {
    const root = spans.find((s) => !s.parentSpanId && s.name === 'POST createComputer');
    if (!root || attribute(root, 'http.response.status_code')?.intValue !== 202) continue;
    creates++;
    requestMs += ms(root);
    let inDatabase = 0;
    for (const child of spans.filter((s) => s.parentSpanId === root.spanId)) {
      inDatabase += ms(child);
      if (child.name !== 'transaction') {
        add(`  ${child.name}`, ms(child));
        continue;
      }
      const inner = spans
        .filter((s) => s.parentSpanId === child.spanId)
        .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
      let statements = 0;
      for (const statement of inner) {
        add(`  transaction: ${statement.name}`, ms(statement));
        statements += ms(statement);
      }
      const last = inner.at(-1);
      const commit = last ? Number(BigInt(child.endTimeUnixNano) - BigInt(last.endTimeUnixNano)) / 1e6 : 0;
      add('  transaction: COMMIT (deferred triggers, quota, WAL flush)', commit);
      add('  transaction: pool checkout, BEGIN and gaps between statements', ms(child) - statements - commit);
    }
    add('  outside the database (auth, validation, render, log, event loop)', ms(root) - inDatabase);
  }
  process.stdout.write(
    `create profile, ${values.engine}: ${result.rps} creates/s traced (p50 ${result.p50} ms, p99 ${result.p99} ms), ` +
      `${creates} traced creates; mean per create ${(requestMs / creates).toFixed(2)} ms:\n`,
  );
  for (const [name, total] of [...totals].sort((a, b) => b[1] - a[1]))
    process.stdout.write(
      `${(total / creates).toFixed(2).padStart(8)} ms  ${((100 * total) / requestMs).toFixed(0).padStart(3)} %${name}\n`,
    );
} finally {
  if (server) await stopChild(server.child, { killAfterMs: 5000 });
  await collector.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
}
