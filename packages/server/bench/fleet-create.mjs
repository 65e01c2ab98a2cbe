// What placement costs a create (design §4.4): the same creates through the API of the built server,
// rate limits as shipped, on a fresh PostgreSQL database each, first without a fleet (the simulated
// driver places nothing) and then with `SVC_SIM_FLEET=on` and hosts registered by `svc-server hosts add`.
//
// SIMULATED hosts: no Docker Engine stands behind them. They are rows with a heartbeat this bench
// writes, and the simulated driver runs the computers; what is measured is placement's statements in
// the create's transaction (the hosts read with what they hold, the chosen host's row locked and its
// computers counted again, the computer's host set), not an Engine.
//
//   pnpm --filter @svc/server build
//   node packages/server/bench/fleet-create.mjs [--hosts 100] [--creates 200] [--database postgres://…]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stopChild } from '@svc/tools/child-process';
import pg from 'pg';
import { runHostsCommand } from '../dist/compose/commands/hosts.js';
import { api, bootstrapToken, quantile, startServer } from './server.mjs';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '100' },
    creates: { type: 'string', default: '200' },
    database: {
      type: 'string',
      default: process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    },
  },
});
const HOSTS = Number(values.hosts);
const CREATES = Number(values.creates);
/** Creates per workspace: its quota of live computers as shipped (20). */
const PER_WORKSPACE = 20;

async function withDatabase(run) {
  const name = `svc_bench_fleet_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: values.database });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(values.database);
  url.pathname = `/${name}`;
  try {
    return await run(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** Creates `CREATES` computers one after another across workspaces; the latency of each, in ms. */
async function measure(hosts) {
  return withDatabase(async (databaseUrl) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-fleet-'));
    const env = {
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: databaseUrl,
      SVC_SECRET_KEY_FILE: join(dir, 'secret-key'),
      SVC_BOOTSTRAP_KEY_FILE: join(dir, 'key.json'),
      SVC_SIM_STEP_MS: '0',
      // A SIMULATED fleet places creates on the hosts table; off, nothing is placed (the baseline).
      SVC_SIM_FLEET: hosts > 0 ? 'on' : 'off',
      SVC_QUOTA_WORKSPACES_PER_PRINCIPAL: String(Math.ceil(CREATES / PER_WORKSPACE) + 1),
      LOG_LEVEL: 'error',
    };
    const server = await startServer(env);
    try {
      if (hosts > 0) {
        // Registered as an operator would; the heartbeat is this bench's (SIMULATED hosts).
        const quiet = { write: () => true };
        for (let i = 0; i < hosts; i++) {
          const code = await runHostsCommand(
            [
              'add',
              `sim-${i}`,
              '--engine',
              `unix:///nonexistent/sim-${i}.sock`,
              '--capacity',
              'vcpus=64,memory_mib=262144,computers=500',
              '--label',
              `zone=${'abc'[i % 3]}`,
            ],
            {
              stdout: quiet,
              stderr: process.stderr,
              env: { DATABASE_URL: databaseUrl, SVC_SECRET_KEY_FILE: env.SVC_SECRET_KEY_FILE },
            },
          );
          if (code !== 0) throw new Error(`hosts add sim-${i}: exit ${code}`);
        }
        const db = new pg.Client({ connectionString: databaseUrl });
        await db.connect();
        await db.query(
          `INSERT INTO host_heartbeats (host_id, seen_at, engine_id)
           SELECT id, now() + interval '1 day', 'simulated-' || name FROM hosts`,
        );
        await db.end();
      }
      const token = await bootstrapToken(server.url, env.SVC_BOOTSTRAP_KEY_FILE);
      const latencies = [];
      let workspace;
      for (let i = 0; i < CREATES; i++) {
        if (i % PER_WORKSPACE === 0) {
          const made = await api(server.url, token, 'POST', '/v1/workspaces', { name: `bench-${i}` });
          if (made.status !== 201) throw new Error(`workspace: ${made.status} ${JSON.stringify(made.body)}`);
          workspace = made.body.workspace.id;
        }
        const started = performance.now();
        const created = await api(server.url, token, 'POST', `/v1/workspaces/${workspace}/computers`, {
          name: `c-${i}`,
          size: ['small', 'small', 'small', 'medium', 'large'][i % 5],
          image: 'ubuntu-2404',
        });
        latencies.push(performance.now() - started);
        if (created.status !== 202)
          throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
      }
      return latencies.sort((a, b) => a - b);
    } finally {
      await stopChild(server.child);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

const none = await measure(0);
const fleet = await measure(HOSTS);
const row = (name, sorted) =>
  `| ${name} | ${quantile(sorted, 0.5).toFixed(1)} ms | ${quantile(sorted, 0.99).toFixed(1)} ms |`;
console.log(
  `create → 202, ${CREATES} creates one after another, rate limits as shipped, PostgreSQL; node ${process.version}`,
);
console.log('| placement | p50 | p99 |');
console.log('|---|---|---|');
console.log(row('no fleet (nothing placed)', none));
console.log(row(`${HOSTS} SIMULATED hosts (placed)`, fleet));
console.log(
  `ratio (placed / not placed): p50 ×${(quantile(fleet, 0.5) / quantile(none, 0.5)).toFixed(2)}, p99 ×${(quantile(fleet, 0.99) / quantile(none, 0.99)).toFixed(2)}`,
);
