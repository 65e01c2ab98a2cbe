// End-to-end throughput of the built server, in ONE run (`pnpm bench` at the root):
//   bare node:http hello (the ceiling), then on PGlite and on PostgreSQL: GET /v1/health,
//   authenticated GET /v1/me, a computer read, a list page over 1,000 and over 100,000 computers,
//   computer creation (a unique Idempotency-Key each), and the three reads again with the read cache
//   off; and Prism's mock answering GET /me.
// The servers run as shipped (pool size, read cache, database bounds, log line per request) except for
// the quota and the simulated step time the create bench needs. Every endpoint is measured twice, with
// the servers' rate limits ON and OFF, and printed as two tables:
//   - the MAIN table, rate limits on: SVC_RATE_LIMITS=principal=1000000000/60,workspace_mutations=…,
//     budgets that never refuse, so the counting production does is measured (on PostgreSQL a
//     statement per request in rate_limits, one more per mutation; on PGlite counters in memory);
//   - beside it, rate limits off (SVC_RATE_LIMITS=off): the request without the counting.
// Per engine, after seeding once: the server with rate limits on, every endpoint; the server with them
// off, every endpoint; then the read-cache-off server, on then off, the three reads.
// Each server is its own child process (node dist/main.js); autocannon runs here. Prints requests/s,
// p99 and the ratios the targets are stated in, each row's targets (BENCHMARKS.md at the repo root)
// beside its figures, then every target with each table's value side by side; bare node:http is
// measured again right after every endpoint, and each ratio uses that neighbour.
// Usage: node bench/run.mjs [--duration 5] [--connections 20] [--rows 100000] [--json out.json]
//        [--engines pglite,postgres] [--only <label regex>] [--cpu-prof <dir>] [--rate-limits <mode>]…
// LOG_LEVEL and SVC_DB_POOL_SIZE in the environment pass to the servers (unset: the shipped default).
// `--server-node-flags=<flags>` starts the measured servers' Node with these flags (space-separated),
// e.g. `--server-node-flags=--max-semi-space-size=2`: an operator's choice (decision 0017), not the
// shipped settings, and said so in the first line printed.
// `--rate-limits` chooses the tables, in order (the first is the main one; default `on` then `off`):
// `on`, `off`, or any other SVC_RATE_LIMITS value, e.g. `--rate-limits off` for the off table alone,
// `--rate-limits on` for the main table alone. `--json` writes every table (its rows and targets).
// `--only` measures just the matching endpoints; `--cpu-prof` runs the measured server under
// `node --cpu-prof` (one .cpuprofile per engine and rate-limit mode in <dir>, named
// server-<engine>-limits-<mode>.cpuprofile; summarise with bench/profile-summary.mjs).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startPrism } from '@svc/contract-tests/prism';
import { childEnv, stopChild } from '@svc/tools/child-process';
import { createTestDatabase } from '@svc/tools/postgres';
import autocannon from 'autocannon';
import { signAssertion } from '../dist/identity/auth/assertion.js';
import { openDatabase } from '../dist/platform/db/open.js';
import { seedWorkspaces } from './seed.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const MAIN = join(here, '..', 'dist', 'main.js');
const { values } = parseArgs({
  // `pnpm bench -- --duration 3` passes the `--` along: drop it.
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '20' },
    rows: { type: 'string', default: '100000' },
    json: { type: 'string' },
    engines: { type: 'string', default: 'pglite,postgres' },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' },
    // Repeatable: one table per value, the first is the main one (see LIMIT_MODES below).
    'rate-limits': { type: 'string', multiple: true, default: ['on', 'off'] },
    'server-node-flags': { type: 'string', default: '' },
  },
});
const DURATION = Number(values.duration);
const WARMUP = Number(values.warmup);
const CONNECTIONS = Number(values.connections);
const BIG = Number(values.rows);
const SMALL = 1000;
const ONLY = values.only ? new RegExp(values.only) : undefined;
const PROFILE_DIR = values['cpu-prof'];
const SERVER_NODE_FLAGS = values['server-node-flags'].split(' ').filter(Boolean);
/** `on`: budgets so large that nothing is ever refused, so what is measured is the counting itself. */
const UNREFUSING_RATE_LIMITS = 'principal=1000000000/60,workspace_mutations=1000000000/60';
/**
 * The servers' rate limits, one table each, in the order given (the first is the main table): `on`
 * counts every request against {@link UNREFUSING_RATE_LIMITS}, `off` counts nothing, any other value is
 * passed as `SVC_RATE_LIMITS` itself (`key` names it in the rows, the JSON and the profiles).
 */
const LIMIT_MODES = values['rate-limits'].map((value, index) => ({
  key: value === 'on' || value === 'off' ? value : `custom-${index + 1}`,
  env: value === 'on' ? UNREFUSING_RATE_LIMITS : value,
}));
if (new Set(LIMIT_MODES.map((mode) => mode.key)).size !== LIMIT_MODES.length)
  throw new Error(`--rate-limits: each value once (${values['rate-limits'].join(', ')})`);

/** Starts a child that prints its URL; answers { url, stop } (stop: SIGTERM by pid, SIGKILL after 3 s). */
async function startChild(name, args, env, pattern) {
  const flags = args.includes(MAIN) ? SERVER_NODE_FLAGS : [];
  const child = spawn(process.execPath, [...flags, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const match = pattern.exec(output);
    if (match) {
      const stop = async () => {
        // A profiled server writes its profile on exit: ask it to exit at once (bench/exit-on-signal.mjs).
        if (PROFILE_DIR && args.includes('--cpu-prof') && child.exitCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          process.kill(child.pid, 'SIGUSR2');
          await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
        }
        await stopChild(child, { killAfterMs: 3000 });
      };
      return { url: match[1], stop, output: () => output };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      if (child.exitCode === null) process.kill(child.pid, 'SIGKILL');
      throw new Error(`${name} did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One autocannon measurement after a short warm-up; fails loudly on errors or unexpected statuses. */
// The bare server runs for the whole bench and is measured again right after every endpoint: on a
// shared machine the load moves within a run, so each ratio compares two neighbouring measurements.
let bareUrl;
async function measure(label, options, tag = '') {
  if (ONLY && !label.startsWith('bare') && !ONLY.test(label)) return { label, skipped: true };
  if (WARMUP > 0) await autocannon({ ...options, connections: CONNECTIONS, duration: WARMUP });
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: DURATION });
  const bad = result.non2xx + result.errors + result.timeouts;
  const row = {
    label,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    total: result.requests.total,
    // Bytes per response (headers included): what the socket writes, which a list page pays for.
    bytes: result.requests.total > 0 ? Math.round(result.throughput.total / result.requests.total) : 0,
    bad,
  };
  if (bareUrl && !label.startsWith('bare')) {
    const alongside = await autocannon({ url: bareUrl, connections: CONNECTIONS, duration: DURATION });
    row.bareRps = Math.round(alongside.requests.average);
  }
  process.stdout.write(
    `  ${tag}${label.padEnd(34)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms` +
      `${row.bareRps ? `  (bare alongside: ${row.bareRps} req/s)` : ''}${bad ? `  (${bad} non-2xx/errors!)` : ''}\n`,
  );
  return row;
}

async function token(base, keyFile) {
  const file = JSON.parse(readFileSync(keyFile, 'utf8'));
  const assertion = await signAssertion(file, { tokenUrl: `${base}/auth/token` });
  const res = await fetch(`${base}/auth/token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${assertion}` },
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`token exchange: ${res.status} ${JSON.stringify(body)}`);
  return { token: body.token.access_token, principalId: file.principal_id };
}

/**
 * The server on one engine: bootstrap, stop, seed in SQL once; then, for each rate-limit mode, the
 * server starts with it and every endpoint is measured; then, for each mode, the server with the read
 * cache off and the three reads.
 */
async function benchEngine(engine) {
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-${engine}-`));
  const keyFile = join(dir, 'bootstrap-key.json');
  const database = engine === 'postgres' ? await createTestDatabase({ prefix: 'svc_bench' }) : undefined;
  // What the bench sets; everything else the servers read is left unset, so it is as shipped (the pool
  // size, the database's time bounds, the read cache on, metrics and tracing off, no response validation).
  const env = {
    HOST: '127.0.0.1',
    PORT: '0',
    SVC_DATA_DIR: join(dir, 'data'),
    SVC_BOOTSTRAP_KEY_FILE: keyFile,
    // The create bench makes thousands of computers in one workspace; operations are claimed but their
    // simulated steps never end during the run, so the worker does not compete for the CPU.
    SVC_QUOTA_COMPUTERS_PER_WORKSPACE: '1000000',
    SVC_SIM_STEP_MS: '600000',
    DATABASE_URL: database?.url ?? '',
    // The server as deployed logs a line per request (info); LOG_LEVEL=silent measures without it.
    LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    // Unset (the shipped default) unless set for the bench.
    SVC_DB_POOL_SIZE: process.env.SVC_DB_POOL_SIZE,
  };
  const pattern = /svc-server listening on (http:\/\/\S+)/;
  const rows = [];
  try {
    // First start bootstraps the empty database (and writes the key file); PGlite allows one process,
    // so the server is stopped while the bench seeds through the server's own database layer.
    const first = await startChild(`server (${engine})`, [MAIN], { ...env, SVC_RATE_LIMITS: 'off' }, pattern);
    await first.stop();
    const principalId = JSON.parse(readFileSync(keyFile, 'utf8')).principal_id;
    const seedStart = Date.now();
    const db = await openDatabase({ databaseUrl: database?.url, dataDir: env.SVC_DATA_DIR });
    // One empty workspace per rate-limit mode for its creates, made up front so that every table's
    // GET /v1/me lists the same workspaces.
    const createIn = Object.fromEntries(LIMIT_MODES.map((mode) => [`bench-create-${mode.key}`, 0]));
    const seeded = await seedWorkspaces(db, principalId, {
      'bench-small': SMALL,
      'bench-big': BIG,
      ...createIn,
    });
    await db.close();
    const small = seeded['bench-small'];
    const big = seeded['bench-big'];
    process.stdout.write(`\n${engine}: seeded ${SMALL} + ${BIG} computers in ${Date.now() - seedStart} ms\n`);

    for (const mode of LIMIT_MODES) {
      process.stdout.write(`${engine}, ${modeTitle(mode)}:\n`);
      const profile = PROFILE_DIR
        ? [
            '--cpu-prof',
            '--cpu-prof-dir',
            PROFILE_DIR,
            '--cpu-prof-name',
            `server-${engine}-limits-${mode.key}.cpuprofile`,
            '--import',
            join(here, 'exit-on-signal.mjs'),
          ]
        : [];
      const server = await startChild(
        `server (${engine}, rate limits ${mode.key})`,
        [...profile, MAIN],
        { ...env, SVC_RATE_LIMITS: mode.env },
        pattern,
      );
      try {
        const base = `${server.url}/v1`;
        const { token: access } = await token(base, keyFile);
        const auth = { authorization: `Bearer ${access}` };
        const at = (label, options) => measureRow(engine, mode, label, options);
        rows.push(await at(`${engine} GET /v1/health`, { url: `${base}/health` }));
        rows.push(await at(`${engine} GET /v1/me`, { url: `${base}/me`, headers: auth }));
        rows.push(...(await measureReads(engine, mode, base, auth, small, big, '')));
        // The creates go to the mode's own workspace (seeded above, empty).
        const createWs = seeded[`bench-create-${mode.key}`].id;
        let n = 0;
        const run = randomBytes(3).toString('hex');
        rows.push(
          await at(`${engine} POST computer`, {
            url: `${base}/workspaces/${createWs}/computers`,
            requests: [
              {
                method: 'POST',
                setupRequest: (request) => {
                  n += 1;
                  return {
                    ...request,
                    headers: {
                      ...auth,
                      'content-type': 'application/json',
                      'idempotency-key': `bench-${run}-${n}`,
                    },
                    body: JSON.stringify({ name: `b-${run}-${n}`, size: 'small', image: 'ubuntu-2404' }),
                  };
                },
              },
            ],
          }),
        );
      } finally {
        await server.stop();
      }
    }
    // The same reads with SVC_READ_CACHE=off: what the database itself costs (every read one statement).
    const uncachedLabels = ['GET computer', `list page (${SMALL})`, `list page (${BIG})`].map(
      (read) => `${engine} ${read}, read cache off`,
    );
    if (uncachedLabels.some((label) => !ONLY || ONLY.test(label))) {
      for (const mode of LIMIT_MODES) {
        process.stdout.write(`${engine}, read cache off, ${modeTitle(mode)}:\n`);
        const uncached = await startChild(
          `server (${engine}, read cache off, rate limits ${mode.key})`,
          [MAIN],
          { ...env, SVC_RATE_LIMITS: mode.env, SVC_READ_CACHE: 'off' },
          pattern,
        );
        try {
          const base = `${uncached.url}/v1`;
          const { token: access } = await token(base, keyFile);
          const auth = { authorization: `Bearer ${access}` };
          rows.push(...(await measureReads(engine, mode, base, auth, small, big, ', read cache off')));
        } finally {
          await uncached.stop();
        }
      }
    }
  } finally {
    await database?.drop().catch((error) => process.stderr.write(`drop failed: ${error.message}\n`));
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** One endpoint on one engine under one rate-limit mode: its row, tagged with both. */
async function measureRow(engine, mode, label, options) {
  return { engine, limits: mode.key, ...(await measure(label, options, `[limits ${mode.key}] `)) };
}

/** GET a computer and the first list page of both workspaces; `suffix` ends each label. */
async function measureReads(engine, mode, base, auth, small, big, suffix) {
  const get = (path) => ({ url: `${base}${path}`, headers: auth });
  return [
    await measureRow(
      engine,
      mode,
      `${engine} GET computer${suffix}`,
      get(`/workspaces/${big.id}/computers/${big.computer}`),
    ),
    await measureRow(
      engine,
      mode,
      `${engine} list page (${SMALL})${suffix}`,
      get(`/workspaces/${small.id}/computers`),
    ),
    await measureRow(
      engine,
      mode,
      `${engine} list page (${BIG})${suffix}`,
      get(`/workspaces/${big.id}/computers`),
    ),
  ];
}

/** How a mode is named in the output: `rate limits on (SVC_RATE_LIMITS=…)`. */
function modeTitle(mode) {
  return mode.key === 'off' ? 'rate limits off' : `rate limits ${mode.key} (SVC_RATE_LIMITS=${mode.env})`;
}

/** When and where the run began (in the JSON). */
const RUN = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
  loadStart: loadavg(),
};

async function main() {
  process.stdout.write(
    `bench: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${DURATION} s per endpoint after ${WARMUP} s warm-up, ${CONNECTIONS} connections` +
      `${SERVER_NODE_FLAGS.length ? `; servers started with node ${SERVER_NODE_FLAGS.join(' ')} (NOT as shipped)` : ''}\n`,
  );
  const rows = [];
  const bare = await startChild('bare', [join(here, 'bare.mjs')], {}, /listening on (http:\/\/\S+)/);
  try {
    rows.push({ engine: 'node:http', ...(await measure('bare node:http hello', { url: bare.url })) });
    bareUrl = bare.url;
    await measureAll(rows);
  } finally {
    await bare.stop();
  }
  report(rows);
}

async function measureAll(rows) {
  const prism = await startPrism();
  try {
    rows.push({
      engine: 'prism',
      ...(await measure('prism mock GET /me', {
        url: `${prism.baseUrl}/me`,
        headers: { authorization: 'Bearer x' },
      })),
    });
  } finally {
    await prism.stop();
  }
  for (const engine of values.engines.split(',')) rows.push(...(await benchEngine(engine)));
}

function report(rows) {
  const measured = rows.filter((r) => !r.skipped);
  // bare node:http and Prism's mock have no rate limits: measured once, they head every table.
  const shared = measured.filter((r) => r.limits === undefined);
  const firstBare = shared.find((r) => r.label === 'bare node:http hello')?.rps ?? Number.NaN;
  /** Throughput as a share of bare node:http measured right after it. */
  const share = (r) => r.rps / (r.bareRps ?? firstBare);
  const tables = LIMIT_MODES.map((mode, index) => {
    const own = measured.filter((r) => r.limits === mode.key);
    const find = (label) =>
      own.find((r) => r.label === label) ??
      shared.find((r) => r.label === label) ?? { rps: Number.NaN, mean: Number.NaN, p99: Number.NaN };
    const targets = targetsOf(find, share);
    const title = LIMIT_MODES.length === 1 ? 'Table' : index === 0 ? 'Main table' : 'Beside it';
    process.stdout.write(`\n${title}: ${modeTitle(mode)}\n`);
    process.stdout.write(
      '\n| endpoint | req/s | p50 ms | p99 ms | bytes | bare alongside | × bare | target | met |\n' +
        '|---|---:|---:|---:|---:|---:|---:|---|---|\n',
    );
    for (const r of [...shared, ...own]) {
      // The row's own targets beside its figures; a value the row does not show is given after `met`.
      const mine = targets.filter((t) => t.label === r.label);
      const goals = mine.map((t) => t.short).join('; ');
      const met = mine
        .map((t) => `${t.met ? 'yes' : 'NO'}${t.aside ? ` (${formatValue(t)})` : ''}`)
        .join('; ');
      process.stdout.write(
        `| ${r.label} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.bytes} | ${r.bareRps ?? firstBare} | ` +
          `${share(r).toFixed(2)} | ${goals} | ${met} |\n`,
      );
    }
    return { rateLimits: mode.key, svcRateLimits: mode.env, rows: [...shared, ...own], targets };
  });
  // Every target once, each table's measurement side by side.
  const names = [...new Set(tables.flatMap((table) => table.targets.map((t) => t.target)))];
  process.stdout.write(
    `\n| target | ${tables.map((table) => `rate limits ${table.rateLimits} | met`).join(' | ')} |\n` +
      `|---|${tables.map(() => '---:|---|').join('')}\n`,
  );
  for (const name of names) {
    const cells = tables.map((table) => {
      const t = table.targets.find((target) => target.target === name);
      return t ? `${formatValue(t)} | ${t.met ? 'yes' : 'NO'}` : '– | –';
    });
    process.stdout.write(`| ${name} | ${cells.join(' | ')} |\n`);
  }
  process.stdout.write(
    `\nload average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  if (values.json) {
    const run = {
      ...RUN,
      loadEnd: loadavg(),
      duration: DURATION,
      warmup: WARMUP,
      connections: CONNECTIONS,
      computers: { small: SMALL, big: BIG },
      engines: values.engines.split(','),
    };
    writeFileSync(values.json, `${JSON.stringify({ run, tables }, null, 2)}\n`);
  }
  const failed = rows.filter((r) => r.bad > 0);
  if (failed.length > 0) {
    process.stderr.write(
      `errors or non-2xx answers in: ${failed.map((r) => `${r.label}${r.limits ? ` [limits ${r.limits}]` : ''}`).join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}

/** A target's measured value in its own unit: `0.31×`, `667/s`, `69 ms`. */
function formatValue(t) {
  if (t.unit === '/s') return `${Math.round(t.value)}/s`;
  if (t.unit === 'ms') return `${t.value} ms`;
  return `${t.value.toFixed(2)}×`;
}

/**
 * The targets (BENCHMARKS.md, issue #14) over one table's rows, each tied to the row (`label`) it is
 * printed beside; `aside` when the value is not one of that row's columns. Targets whose endpoints were
 * not measured are left out.
 */
function targetsOf(find, share) {
  const prismRps = find('prism mock GET /me').rps;
  const targets = [];
  const target = (label, short, value, goal, higher, unit = '×', aside = false) =>
    targets.push({ label, target: `${label}: ${short}`, short, value, goal, higher, unit, aside });
  for (const engine of values.engines.split(',')) {
    const me = `${engine} GET /v1/me`;
    target(me, '≥ 0.30× bare', share(find(me)), 0.3, true);
    target(me, '≥ 5× Prism mock', find(me).rps / prismRps, 5, true, '×', true);
    // The reads as served (from the replica's read cache once warm), then with SVC_READ_CACHE=off.
    for (const suffix of ['', ', read cache off']) {
      const computer = `${engine} GET computer${suffix}`;
      const small = `${engine} list page (${SMALL})${suffix}`;
      const big = `${engine} list page (${BIG})${suffix}`;
      target(computer, '≥ 0.20× bare', share(find(computer)), 0.2, true);
      // A list page of 50, whatever the workspace's size.
      target(small, '≥ 0.10× bare', share(find(small)), 0.1, true);
      target(big, '≥ 0.10× bare', share(find(big)), 0.1, true);
      // Cost per page = 1 / (× bare): both pages normalised by the bare run beside each of them.
      target(
        big,
        `costs ≤ 1.5× the page over ${SMALL}`,
        share(find(small)) / share(find(big)),
        1.5,
        false,
        '×',
        true,
      );
    }
    // Creates are stated in absolute terms (they write and commit): PostgreSQL ≥ 1,000/s, PGlite ≥ 300/s.
    const create = `${engine} POST computer`;
    const creates = engine === 'postgres' ? 1000 : 300;
    target(create, `≥ ${creates}/s`, find(create).rps, creates, true, '/s');
    target(create, 'p99 ≤ 50 ms', find(create).p99, 50, false, 'ms');
  }
  return targets
    .filter((t) => !Number.isNaN(t.value))
    .map((t) => ({ ...t, met: t.higher ? t.value >= t.goal : t.value <= t.goal }));
}

await main();
