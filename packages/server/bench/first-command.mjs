// The first command right after a create (issue #45, item 4): rounds back to back, each a create, the
// first `echo hi` answered, and a delete (answered 202, not waited for: the next round begins at once),
// through the built server at the Docker driver's shipped pool. Two clients, interleaved round by round:
//   - poll: POST …/exec every 5 ms until it answers 200 (what a client without `wait` does);
//   - wait: one POST …/exec?wait=30;
// and two baselines over the Engine API, in the same run: a container made, started and exec'd (the
// bare create → first command), and an exec in a container that runs already (the Engine's exec alone).
// Prints p50 and p99 of each, ratios to the bare create → first command, how many creates the pool
// served, and the server's pool as it stood at the end.
//
//   node packages/server/bench/first-command.mjs [--rounds 12] [--warmup 2] [--pool <SVC_POOL>]
//     [--limits off|shipped] [--socket /var/run/docker.sock]
//
// Needs `pnpm build` and `pnpm images:build`. `--pool` unset: the server's default (what ships).
// `--limits off` (the default): rate limits off in the server, since a client polling every 5 ms sends
// hundreds of mutations a minute, past the 120 a workspace has (its 429s would be measured instead).
// `--limits shipped`: the server's rate limits as shipped, and only the `wait` client (three mutations
// a round, within the budget for up to 40 rounds a minute).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stopChild } from '@svc/tools/child-process';
import { dockerClient, POOL_LABEL } from '../dist/compose/docker.js';
import { bareExec, createBareContainer, engine, expectStatus } from './engine.mjs';
import { api, bootstrapToken, quantile, startServer } from './server.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '12' },
    warmup: { type: 'string', default: '2' },
    pool: { type: 'string' },
    limits: { type: 'string', default: 'off' },
    socket: { type: 'string', default: process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock' },
  },
});
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const SOCKET = values.socket;
const POLL_MS = 5;
if (!['off', 'shipped'].includes(values.limits)) throw new Error('--limits is off or shipped');
const SHIPPED = values.limits === 'shipped';
/** The API's ways measured: a polling client would meet the shipped limits' 429s. */
const WAYS = SHIPPED ? ['wait'] : ['poll', 'wait'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A create, then the first `echo hi` answered 200 (`how`: poll every 5 ms, or one wait), then a delete. */
async function apiRound(server, docker, instance, index, how) {
  const { url, token, ws } = server;
  const t0 = performance.now();
  const wall0 = Date.now();
  const created = await api(url, token, 'POST', `${ws}/computers`, {
    name: `${how}-${index}`,
    size: 'small',
    image: 'busybox',
  });
  expectStatus(created, [202], 'create');
  const answered = performance.now() - t0;
  const path = `${ws}/computers/${created.body.computer.id}`;
  const echo = { argv: ['echo', 'hi'] };
  let ran;
  let calls = 0;
  for (;;) {
    calls++;
    ran = await api(url, token, 'POST', `${path}/exec${how === 'wait' ? '?wait=30' : ''}`, echo, {
      idempotent: false,
    });
    if (ran.status === 200 || how === 'wait') break;
    expectStatus(ran, [409], 'exec while starting');
    await sleep(POLL_MS);
  }
  const first = performance.now() - t0;
  if (ran.status !== 200 || ran.body.execution.stdout !== 'hi\n')
    throw new Error(`exec: ${JSON.stringify(ran.body)}`);
  const info = await docker.getContainer(`svc-${instance}-${created.body.computer.id}`).inspect();
  const op = await api(url, token, 'GET', `/v1/operations/${created.body.operations[0].id}`);
  const running = Date.parse(op.body.operation.completed_at) - wall0;
  expectStatus(await api(url, token, 'DELETE', path), [202], 'delete');
  return { first, answered, running, calls, pooled: info.Config.Labels[POOL_LABEL] !== undefined };
}

/** The bare Engine: create, start, the first exec; then a remove (not timed). */
async function bareRound(agent, instance, index) {
  const name = `svc-${instance}-bare-${index}`;
  const t0 = performance.now();
  await createBareContainer(SOCKET, agent, name, instance);
  expectStatus(await engine(SOCKET, agent, 'POST', `/containers/${name}/start`), [204], 'container start');
  await bareExec(SOCKET, agent, name);
  const first = performance.now() - t0;
  expectStatus(
    await engine(SOCKET, agent, 'DELETE', `/containers/${name}?force=true&v=true`),
    [204],
    'container remove',
  );
  return { first };
}

const round1 = (ms) => Math.round(ms * 10) / 10;
const stat = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
};

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-first-command-'));
  const docker = dockerClient(SOCKET);
  const agent = new http.Agent({ keepAlive: true });
  const instance = `bench-first-${process.pid}`;
  const bareInstance = `bench-first-bare-${process.pid}`;
  let server;
  try {
    const keyFile = join(dir, 'key.json');
    server = await startServer({
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_BOOTSTRAP_KEY_FILE: keyFile,
      SVC_DRIVER: 'docker',
      SVC_DOCKER_SOCKET: SOCKET,
      SVC_DOCKER_INSTANCE: instance,
      ...(SHIPPED ? {} : { SVC_RATE_LIMITS: 'off' }),
      LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
      ...(values.pool === undefined ? {} : { SVC_POOL: values.pool }),
    });
    server.token = await bootstrapToken(server.url, keyFile);
    const ws = await api(server.url, server.token, 'POST', '/v1/workspaces', {
      name: `bench-first-${process.pid}`,
    });
    expectStatus(ws, [201], 'workspace');
    server.ws = `/v1/workspaces/${ws.body.workspace.id}`;
    // A container that runs, for the Engine's exec alone.
    const running = `svc-${bareInstance}-running`;
    await createBareContainer(SOCKET, agent, running, bareInstance);
    expectStatus(
      await engine(SOCKET, agent, 'POST', `/containers/${running}/start`),
      [204],
      'container start',
    );
    // The pool fills at start-up: give it the time a server that has been up a while has had.
    await sleep(3000);
    const times = { bare: [], exec: [], poll: [], wait: [] };
    const loads = [loadavg()[0]];
    for (let index = 0; index < WARMUP + ROUNDS; index++) {
      const t0 = performance.now();
      await bareExec(SOCKET, agent, running);
      const exec = { first: performance.now() - t0 };
      const results = { exec, bare: await bareRound(agent, bareInstance, index) };
      // Each API way goes first in every other round: the second meets the first's delete and refill.
      for (const how of index % 2 ? [...WAYS].reverse() : WAYS)
        results[how] = await apiRound(server, docker, instance, index, how);
      if (index >= WARMUP) for (const [way, result] of Object.entries(results)) times[way].push(result);
    }
    loads.push(loadavg()[0]);
    const labels = {
      exec: 'bare Engine: exec in a running container',
      bare: 'bare Engine: create, start, exec',
      poll: 'API: create, exec polled every 5 ms',
      wait: 'API: create, exec?wait=30',
    };
    const base = stat(times.bare.map((t) => t.first));
    process.stdout.write(
      `first command after a create: ${ROUNDS} rounds back to back (after ${WARMUP} warm-up), the ways interleaved; ` +
        `SVC_POOL=${values.pool ?? '(default)'}; rate limits ${SHIPPED ? 'as shipped' : 'off'}; load average ${loads.map((l) => l.toFixed(2)).join(' → ')}\n`,
    );
    for (const way of ['exec', 'bare', ...WAYS]) {
      const s = stat(times[way].map((t) => t.first));
      const extra =
        way === 'poll' || way === 'wait'
          ? `  requests p50 ${stat(times[way].map((t) => t.calls)).p50}, pool served ${times[way].filter((t) => t.pooled).length}/${times[way].length}` +
            `\n      of which: create answered p50 ${round1(stat(times[way].map((t) => t.answered)).p50)} ms, running (operation completed) p50 ${round1(stat(times[way].map((t) => t.running)).p50)} ms`
          : '';
      process.stdout.write(
        `  ${labels[way].padEnd(42)} p50 ${String(round1(s.p50)).padStart(6)} ms  p99 ${String(round1(s.p99)).padStart(6)} ms` +
          `  ×${(s.p50 / base.p50).toFixed(2)} p50  ×${(s.p99 / base.p99).toFixed(2)} p99${extra}\n`,
      );
    }
  } finally {
    if (server) await stopChild(server.child, { killAfterMs: 5000 });
    for (const label of [instance, bareInstance]) {
      const left = await docker.listContainers({ all: true, filters: { label: [`svc.instance=${label}`] } });
      for (const container of left)
        await docker
          .getContainer(container.Id)
          .remove({ force: true, v: true })
          .catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
