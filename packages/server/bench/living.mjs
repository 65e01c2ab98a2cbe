// Speed in a living workspace: the built server at production defaults, read and written while its
// workspace changes, against a bare node:http answering the same computer's JSON, in ONE run, on PGlite
// and on PostgreSQL. Each engine runs two phases, each on a fresh server (`node dist/main.js`: the
// worker steps simulated computers every 500 ms; the event log and the webhook outbox on) with three
// settings of the bench's own: rate limits counted with budgets too large to refuse, a quota that lets
// thousands of computers into one workspace, and loopback webhooks (the receiver is this script's, on
// 127.0.0.1, and every workspace has an endpoint for every event):
//   - STATIC: `living-read` holds 120 running computers inserted straight in SQL (bench/seed.mjs, as
//     bench/run.mjs seeds), and nothing changes while it is read;
//   - LIVING: `living-read` gets 120 computers created THROUGH THE API and is read at once, while the
//     worker is still finishing them, and this script changes it at `--changes` per second on top (in
//     turn a stop or a start of one of its computers, a create, a delete of one the churn created),
//     so state changes, events and webhook deliveries go on all the time.
// In each phase: `GET /v1/me`, `GET` one computer of `living-read`, its first list page (50), then
// creates (a unique name and Idempotency-Key each) in a workspace of their own, `living-create`.
// Every measurement runs in a child process of its own (bench/load.mjs, autocannon: 1 s warm-up,
// `--duration` s measured; `--read-connections` for reads, `--create-connections` for creates), and the
// bare server is measured the same way right after it: each ratio is to that neighbour.
//
//   node packages/server/bench/living.mjs [--engines pglite,postgres] [--duration 5] [--changes 20]
//        [--read-connections 32] [--create-connections 16] [--computers 120] [--only <regex>] [--json out.json]
//
// Needs `pnpm build`; PostgreSQL from TEST_DATABASE_URL (a database of its own per phase, dropped after).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { childEnv, stopChild } from '@svc/tools/child-process';
import { createTestDatabase } from '@svc/tools/postgres';
import { openDatabase } from '../dist/platform/db/open.js';
import { seedWorkspaces } from './seed.mjs';
import { api, bootstrapToken, startServer } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    engines: { type: 'string', default: 'pglite,postgres' },
    duration: { type: 'string', default: '5' },
    changes: { type: 'string', default: '20' },
    'read-connections': { type: 'string', default: '32' },
    'create-connections': { type: 'string', default: '16' },
    computers: { type: 'string', default: '120' },
    only: { type: 'string' },
    json: { type: 'string' },
  },
});
const DURATION = Number(values.duration);
const CHANGES_PER_SECOND = Number(values.changes);
const READ_CONNECTIONS = Number(values['read-connections']);
const CREATE_CONNECTIONS = Number(values['create-connections']);
const COMPUTERS = Number(values.computers);
const ONLY = values.only ? new RegExp(values.only) : undefined;
const UNREFUSING_RATE_LIMITS = 'principal=1000000000/60,workspace_mutations=1000000000/60';
/** The targets of issue #45 (PostgreSQL, rate limits on, a living workspace); see BENCHMARKS.md. */
const TARGETS = {
  postgres: { computer: { ratio: 0.2 }, list: { ratio: 0.1 }, create: { rps: 1000, p99: 50 } },
  pglite: { create: { rps: 300 } },
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs bench/load.mjs with `options`; answers its JSON line. */
function load(options) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'load.mjs'), JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out.trim().split('\n').pop()));
      else reject(new Error(`load generator exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

/** A child that prints "listening on <url>": answers { url, stop }. */
async function startBare(body) {
  const child = spawn(process.execPath, [join(here, 'bare.mjs'), body], {
    env: childEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  for (let i = 0; i < 200; i++) {
    const match = /listening on (http:\/\/\S+)/.exec(output);
    if (match) return { url: match[1], stop: () => stopChild(child, { killAfterMs: 3000 }) };
    await sleep(50);
  }
  await stopChild(child, { killAfterMs: 1000 });
  throw new Error(`bare server did not start: ${output}`);
}

/** A webhook receiver on 127.0.0.1 that answers 204 and counts; bounded: it closes with the bench. */
async function startReceiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('error', () => {});
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  server.requestTimeout = 10_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function must(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Changes `living-read` at `perSecond` while running: in turn a stop or a start of one of its
 * computers (whichever its state allows), a create, and a delete of a computer the churn created.
 * Counts what it asked and what was refused (a 409 when a computer is mid-change is expected).
 */
function churn(base, token, wsPath, ids, perSecond) {
  let running = true;
  const counts = { asked: 0, accepted: 0, refused: 0 };
  const created = [];
  let turn = 0;
  const one = async () => {
    const kind = turn++ % 4;
    let res;
    if (kind === 2) {
      res = await api(base, token, 'POST', `${wsPath}/computers`, {
        name: `churn-${turn}`,
        image: 'busybox',
        size: 'small',
      });
      if (res.status === 202) created.push(res.body.computer.id);
    } else if (kind === 3 && created.length > 0) {
      res = await api(base, token, 'DELETE', `${wsPath}/computers/${created.shift()}`);
    } else {
      const id = ids[Math.floor(Math.random() * ids.length)];
      const got = await api(base, token, 'GET', `${wsPath}/computers/${id}`);
      const action = got.body?.computer?.state === 'running' ? 'stop' : 'start';
      res = await api(base, token, 'POST', `${wsPath}/computers/${id}/${action}`);
    }
    counts.asked++;
    if (res?.status === 202) counts.accepted++;
    else counts.refused++;
  };
  const loop = (async () => {
    const gap = 1000 / perSecond;
    let next = Date.now();
    const inFlight = new Set();
    while (running) {
      const p = one()
        .catch(() => {
          counts.refused++;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      next += gap;
      await sleep(Math.max(0, next - Date.now()));
    }
    await Promise.all(inFlight);
  })();
  return {
    counts,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/**
 * One phase on a fresh server (its own data directory or database): 120 computers created through the
 * API in `living-read`; STATIC waits for them to settle and changes nothing, LIVING measures at once
 * while the worker is still finishing them and the churn changes the workspace.
 */
async function benchPhase(engine, phase, receiver) {
  const dir = mkdtempSync(join(tmpdir(), `svc-living-${engine}-`));
  const keyFile = join(dir, 'bootstrap-key.json');
  const database = engine === 'postgres' ? await createTestDatabase({ prefix: 'svc_living' }) : undefined;
  const rows = [];
  let server;
  let bare;
  let changes;
  try {
    const env = {
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_BOOTSTRAP_KEY_FILE: keyFile,
      DATABASE_URL: database?.url ?? '',
      SVC_RATE_LIMITS: UNREFUSING_RATE_LIMITS,
      SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '1000000',
      SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true',
      LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    };
    let ids = [];
    let readPath;
    const seedStart = Date.now();
    if (phase === 'static') {
      // Rows inserted straight in SQL, all running, never changed: the first start bootstraps, then
      // the server stops while the bench seeds through its own database layer (PGlite allows one process).
      const first = await startServer(env);
      await stopChild(first.child, { killAfterMs: 5000 });
      const principalId = JSON.parse(readFileSync(keyFile, 'utf8')).principal_id;
      const db = await openDatabase({ databaseUrl: database?.url, dataDir: env.SVC_DATA_DIR });
      const seeded = await seedWorkspaces(db, principalId, { 'living-read': COMPUTERS });
      const list = await db.query('SELECT id FROM computers WHERE workspace_id = $1 ORDER BY id', [
        seeded['living-read'].id,
      ]);
      await db.close();
      ids = list.rows.map((row) => row.id);
      readPath = `/v1/workspaces/${seeded['living-read'].id}`;
    }
    server = await startServer(env);
    const base = server.url;
    const token = await bootstrapToken(base, keyFile);
    const workspace = async (name) => {
      const ws = must(await api(base, token, 'POST', '/v1/workspaces', { name }), 201, 'workspace');
      const path = `/v1/workspaces/${ws.workspace.id}`;
      must(
        await api(base, token, 'POST', `${path}/webhook-endpoints`, {
          url: receiver.url,
          event_types: ['*'],
        }),
        201,
        'webhook endpoint',
      );
      return path;
    };
    const receivedBefore = receiver.received();
    if (phase === 'living') {
      // Created through the API and read at once: the worker is still finishing them when the
      // measuring starts, and the churn changes the workspace on top.
      readPath = await workspace('living-read');
      for (let i = 0; i < COMPUTERS; i += 8) {
        const batch = [];
        for (let j = i; j < Math.min(COMPUTERS, i + 8); j++)
          batch.push(
            api(base, token, 'POST', `${readPath}/computers`, {
              name: `seed-${j}`,
              image: 'busybox',
              size: 'small',
            }),
          );
        for (const res of await Promise.all(batch)) ids.push(must(res, 202, 'seed create').computer.id);
      }
      changes = churn(base, token, readPath, ids, CHANGES_PER_SECOND);
    }
    process.stdout.write(
      `\n${engine}, ${phase}: ${COMPUTERS} computers ` +
        `${phase === 'static' ? `inserted in SQL, all running (${Date.now() - seedStart} ms); nothing changes while measured` : `created through the API and read at once, ${CHANGES_PER_SECOND} changes/s on top`}\n`,
    );
    const phaseStart = Date.now();
    const auth = { authorization: `Bearer ${token}` };
    const target = ids[Math.floor(ids.length / 2)];
    // The bare server answers the body a GET of that computer answers, byte for byte.
    const { body: sample } = await api(base, token, 'GET', `${readPath}/computers/${target}`);
    bare = await startBare(JSON.stringify(sample));
    const createPath = await workspace('living-create');
    const endpoints = [
      ['GET /v1/me', `${base}/v1/me`],
      ['GET a computer', `${base}${readPath}/computers/${target}`],
      ['list page (50 of 120)', `${base}${readPath}/computers`],
    ].map(([label, url]) => ({ label, options: { url, headers: auth, connections: READ_CONNECTIONS } }));
    endpoints.push({
      label: 'POST a computer',
      options: {
        url: `${base}${createPath}/computers`,
        headers: auth,
        connections: CREATE_CONNECTIONS,
        create: { name: phase },
      },
    });
    for (const { label, options } of endpoints) {
      if (ONLY && !ONLY.test(label)) continue;
      const row = await load({ ...options, duration: DURATION });
      const alongside = await load({ url: bare.url, connections: options.connections, duration: DURATION });
      Object.assign(row, { engine, phase, label, bareRps: alongside.rps, ratio: row.rps / alongside.rps });
      rows.push(row);
      process.stdout.write(
        `  ${label.padEnd(24)} ${String(row.rps).padStart(6)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  ` +
          `${row.ratio.toFixed(2)}× bare (${alongside.rps} req/s)${row.bad ? `  ${row.bad} non-2xx/errors!` : ''}\n`,
      );
    }
    const seconds = (Date.now() - phaseStart) / 1000;
    if (changes) {
      await changes.stop();
      process.stdout.write(
        `  while measured: ${changes.counts.asked} changes asked (${(changes.counts.asked / seconds).toFixed(1)}/s; ` +
          `${changes.counts.accepted} accepted, ${changes.counts.refused} refused mid-change)`,
      );
    } else process.stdout.write('  while measured: no change asked');
    process.stdout.write(`, ${receiver.received() - receivedBefore} webhook deliveries received\n`);
  } finally {
    await changes?.stop();
    await bare?.stop();
    if (server) await stopChild(server.child, { killAfterMs: 5000 });
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

function summary(rows) {
  const lines = [
    '',
    'engine    endpoint                 static req/s (× bare)   living req/s (× bare)   living p99   target   met',
  ];
  for (const engine of new Set(rows.map((row) => row.engine))) {
    for (const label of new Set(rows.filter((row) => row.engine === engine).map((row) => row.label))) {
      const at = (phase) =>
        rows.find((row) => row.engine === engine && row.label === label && row.phase === phase);
      const [s, l] = [at('static'), at('living')];
      const key = label.startsWith('GET a')
        ? 'computer'
        : label.startsWith('list')
          ? 'list'
          : label.startsWith('POST')
            ? 'create'
            : undefined;
      const target = key ? TARGETS[engine]?.[key] : undefined;
      let text = '';
      let met = '';
      if (target && l) {
        const parts = [];
        const ok = [];
        if (target.ratio) {
          parts.push(`≥ ${target.ratio}×`);
          ok.push(l.ratio >= target.ratio);
        }
        if (target.rps) {
          parts.push(`≥ ${target.rps}/s`);
          ok.push(l.rps >= target.rps);
        }
        if (target.p99) {
          parts.push(`p99 ≤ ${target.p99} ms`);
          ok.push(l.p99 <= target.p99);
        }
        text = parts.join(', ');
        met = ok.every(Boolean) ? 'yes' : 'NO';
      }
      const cell = (row) => (row ? `${row.rps} (${row.ratio.toFixed(2)}×)` : '—');
      lines.push(
        `${engine.padEnd(9)} ${label.padEnd(24)} ${cell(s).padEnd(23)} ${cell(l).padEnd(23)} ${`${l?.p99 ?? '—'} ms`.padEnd(12)} ${text.padEnd(8)} ${met}`,
      );
    }
  }
  return lines.join('\n');
}

const receiver = await startReceiver();
const loadStart = loadavg()[0];
const rows = [];
process.stdout.write(
  `living workspace bench: node ${process.version}, ${cpus().length} cpus, load ${loadStart.toFixed(2)}; ` +
    `${DURATION} s per figure, ${READ_CONNECTIONS} connections for reads, ${CREATE_CONNECTIONS} for creates, ` +
    `${CHANGES_PER_SECOND} changes/s while living\n`,
);
try {
  for (const engine of values.engines.split(','))
    for (const phase of ['static', 'living']) rows.push(...(await benchPhase(engine, phase, receiver)));
} finally {
  await receiver.close();
}
process.stdout.write(
  `${summary(rows)}\n\nload average ${loadStart.toFixed(2)} → ${loadavg()[0].toFixed(2)}\n`,
);
if (values.json)
  writeFileSync(values.json, `${JSON.stringify({ date: new Date().toISOString(), rows }, null, 2)}\n`);
