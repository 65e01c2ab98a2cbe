// Computers in a blink (issue #28, item 4): create → running, create → first command answered, and the
// start of a stopped computer, three ways in one run, interleaved round by round:
//   - bare: the Engine API over a kept-alive unix socket, as a small script would call it: container
//     create (the driver's options: no network, read-only root, a /home volume, limits) and start; then
//     an exec of `echo hi` (create, start attached, inspect); stop, then start again;
//   - api, no pool: a server (SVC_DRIVER=docker, rate limits as shipped) with SVC_POOL=off:
//     POST …/computers, then the operation's long poll (`?wait=30`) until it succeeded (the computer is
//     `running`), then POST …/exec of `echo hi`; stop; start (POST …/start and its long poll);
//   - api, pool: a second server, the same but with SVC_POOL=busybox:small=2.
// Each way deletes its computer at the end of a round (not timed). Prints the median and p99 of each
// figure and its ratio to the bare Engine, and how many creates the pool served.
//
//   node packages/server/bench/computers.mjs [--samples 20] [--warmup 2] [--gap-ms 500] [--socket /var/run/docker.sock]
//
// Needs `pnpm build` and `pnpm images:build`. Each server's workspace makes 5 mutations a round; rate
// limits as shipped allow 120 a minute per workspace, which a round of three ways stays under.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stopChild } from '@svc/tools/child-process';
import { dockerClient, POOL_LABEL } from '../dist/compose/docker.js';
import { bareExec, createBareContainer, engine as engineCall, expectStatus } from './engine.mjs';
import { api, bootstrapToken, quantile, startServer } from './server.mjs';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    'gap-ms': { type: 'string', default: '500' },
    socket: { type: 'string', default: process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock' },
  },
});
const SAMPLES = Number(values.samples);
const WARMUP = Number(values.warmup);
const GAP_MS = Number(values['gap-ms']);
const SOCKET = values.socket;
const engine = (agent, method, path, body) => engineCall(SOCKET, agent, method, path, body);

/** One round of the bare Engine: the times of create → running, → first command, and a start. */
async function bareRound(agent, instance, index) {
  const name = `svc-${instance}-bare-${index}`;
  const t0 = performance.now();
  await createBareContainer(SOCKET, agent, name, instance);
  expectStatus(await engine(agent, 'POST', `/containers/${name}/start`), [204], 'container start');
  const running = performance.now() - t0;
  await bareExec(SOCKET, agent, name);
  const first = performance.now() - t0;
  expectStatus(await engine(agent, 'POST', `/containers/${name}/stop?t=10`), [204], 'container stop');
  const t1 = performance.now();
  expectStatus(await engine(agent, 'POST', `/containers/${name}/start`), [204], 'container start');
  const start = performance.now() - t1;
  expectStatus(
    await engine(agent, 'DELETE', `/containers/${name}?force=true&v=true`),
    [204],
    'container remove',
  );
  return { running, first, start };
}

/** A server of its own (its own data, instance label and workspace), with or without a pool. */
async function openServer(dir, name, instance, extraEnv) {
  const keyFile = join(dir, `${name}-key.json`);
  const server = await startServer({
    HOST: '127.0.0.1',
    PORT: '0',
    SVC_DATA_DIR: join(dir, `${name}-data`),
    SVC_BOOTSTRAP_KEY_FILE: keyFile,
    SVC_DRIVER: 'docker',
    SVC_DOCKER_SOCKET: SOCKET,
    SVC_DOCKER_INSTANCE: instance,
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    ...extraEnv,
  });
  const token = await bootstrapToken(server.url, keyFile);
  const ws = await api(server.url, token, 'POST', '/v1/workspaces', { name: `bench-${name}-${process.pid}` });
  expectStatus(ws, [201], 'workspace');
  return { ...server, token, ws: `/v1/workspaces/${ws.body.workspace.id}` };
}

async function settled(server, answer, what) {
  expectStatus(answer, [202], what);
  const op = await api(
    server.url,
    server.token,
    'GET',
    `/v1/operations/${answer.body.operations[0].id}?wait=30`,
  );
  if (op.body.operation.state !== 'succeeded') throw new Error(`${what}: ${JSON.stringify(op.body)}`);
}

/** One round through a server: the same three times, and whether the pool served the create. */
async function apiRound(server, docker, instance, index) {
  const { url, token, ws } = server;
  const t0 = performance.now();
  const created = await api(url, token, 'POST', `${ws}/computers`, {
    name: `c${index}`,
    size: 'small',
    image: 'busybox',
  });
  await settled(server, created, 'create');
  const running = performance.now() - t0;
  const path = `${ws}/computers/${created.body.computer.id}`;
  const ran = await api(url, token, 'POST', `${path}/exec`, { argv: ['echo', 'hi'] }, { idempotent: false });
  if (ran.status !== 200 || ran.body.execution.stdout !== 'hi\n')
    throw new Error(`exec: ${JSON.stringify(ran.body)}`);
  const first = performance.now() - t0;
  const info = await docker.getContainer(`svc-${instance}-${created.body.computer.id}`).inspect();
  const pooled = info.Config.Labels[POOL_LABEL] !== undefined;
  await settled(server, await api(url, token, 'POST', `${path}/stop`), 'stop');
  const t1 = performance.now();
  await settled(server, await api(url, token, 'POST', `${path}/start`), 'start');
  const start = performance.now() - t1;
  await settled(server, await api(url, token, 'DELETE', path), 'delete');
  return { running, first, start, pooled };
}

const round1 = (ms) => Math.round(ms * 10) / 10;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-computers-'));
  const docker = dockerClient(SOCKET);
  const agent = new http.Agent({ keepAlive: true });
  const instances = {
    bare: `bench-bare-${process.pid}`,
    off: `bench-off-${process.pid}`,
    on: `bench-on-${process.pid}`,
  };
  const servers = [];
  try {
    const off = await openServer(dir, 'off', instances.off, { SVC_POOL: 'off' });
    servers.push(off);
    const on = await openServer(dir, 'on', instances.on, { SVC_POOL: 'busybox:small=2' });
    servers.push(on);
    const times = { bare: [], off: [], on: [] };
    for (let index = 0; index < WARMUP + SAMPLES; index++) {
      const results = {
        bare: await bareRound(agent, instances.bare, index),
        off: await apiRound(off, docker, instances.off, index),
        on: await apiRound(on, docker, instances.on, index),
      };
      if (index >= WARMUP) for (const [way, result] of Object.entries(results)) times[way].push(result);
      await new Promise((resolve) => setTimeout(resolve, GAP_MS));
    }
    const labels = {
      bare: 'bare Engine API',
      off: 'API, no pool',
      on: 'API, pool (busybox:small=2)',
    };
    const figures = {
      running: 'create → running',
      first: 'create → first command answered',
      start: 'start of a stopped computer',
    };
    process.stdout.write(
      `computers: ${SAMPLES} rounds (after ${WARMUP} warm-up), the three ways interleaved, rate limits as shipped\n`,
    );
    for (const [figure, title] of Object.entries(figures)) {
      process.stdout.write(`${title}\n`);
      const stat = (way) => {
        const sorted = times[way].map((t) => t[figure]).sort((a, b) => a - b);
        return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
      };
      const bare = stat('bare');
      for (const way of ['bare', 'off', 'on']) {
        const s = stat(way);
        process.stdout.write(
          `  ${labels[way].padEnd(30)} p50 ${String(round1(s.p50)).padStart(7)} ms  p99 ${String(round1(s.p99)).padStart(7)} ms` +
            `  ×${(s.p50 / bare.p50).toFixed(2)} p50\n`,
        );
      }
    }
    const served = times.on.filter((t) => t.pooled).length;
    process.stdout.write(
      `the pool served ${served} of ${times.on.length} creates; no-pool server: ${times.off.filter((t) => t.pooled).length}\n`,
    );
  } finally {
    for (const server of servers) await stopChild(server.child, { killAfterMs: 5000 });
    // Everything the three ways left (a failed round, the pool's ready containers), by id.
    for (const instance of Object.values(instances)) {
      const left = await docker.listContainers({
        all: true,
        filters: { label: [`svc.instance=${instance}`] },
      });
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
