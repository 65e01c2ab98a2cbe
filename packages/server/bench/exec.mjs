// `exec` of `echo hi` six ways, in one run, against one running busybox container (issue #28, item 2):
//   - bare: the Engine API's own exec over the socket (create, start attached, inspect) on a kept-alive
//     unix-socket agent: the baseline;
//   - engineDriver: DockerDriver.exec in this process (no HTTP) with the exec agent turned off: the
//     Engine's exec each time;
//   - driver: DockerDriver.exec in this process, as the server runs it: through the container's exec
//     agent once it is up (the warm-up starts it);
//   - floor: GET /v1/workspaces/{ws}/computers/{computer} through the server: what any request costs there;
//   - api: POST /v1/workspaces/{ws}/computers/{computer}/exec through the built server (SVC_DRIVER=docker,
//     rate limits as shipped, loopback), without an Idempotency-Key (it is optional), and again with one
//     (the server then writes the key's record and the answer: database writes of its own).
// They alternate in rounds, so load on a shared machine falls on all of them alike. Prints the median,
// and p95 and p99 of each and its ratios to the bare baseline. Needs `pnpm build` and `pnpm images:build`.
//
//   node packages/server/bench/exec.mjs [--samples 40] [--warmup 5] [--gap-ms 150] [--socket /var/run/docker.sock]
//
// Rate limits as shipped allow 120 mutations a minute per workspace and every exec through the server
// is one (two per round): keep samples + warmup under about 55.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stopChild } from '@svc/tools/child-process';
import { DockerDriver, dockerClient } from '../dist/compose/docker.js';
import { bareExec, removeInstance } from './engine.mjs';
import { api, bootstrapToken, quantile, startServer } from './server.mjs';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '40' },
    warmup: { type: 'string', default: '5' },
    'gap-ms': { type: 'string', default: '150' },
    socket: { type: 'string', default: process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock' },
  },
});
const SAMPLES = Number(values.samples);
const WARMUP = Number(values.warmup);
const GAP_MS = Number(values['gap-ms']);
const SOCKET = values.socket;
const INSTANCE = `bench-exec-${process.pid}`;

const round = (ms) => Math.round(ms * 10) / 10;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-exec-'));
  const keyFile = join(dir, 'bootstrap-key.json');
  const docker = dockerClient(SOCKET);
  let server;
  let computerId;
  let driver;
  try {
    server = await startServer({
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_BOOTSTRAP_KEY_FILE: keyFile,
      SVC_DRIVER: 'docker',
      SVC_DOCKER_SOCKET: SOCKET,
      SVC_DOCKER_INSTANCE: INSTANCE,
      LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    });
    const base = server.url;
    const token = await bootstrapToken(base, keyFile);
    const ws = await api(base, token, 'POST', '/v1/workspaces', { name: `bench-exec-${process.pid}` });
    if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${JSON.stringify(ws.body)}`);
    const wsPath = `/v1/workspaces/${ws.body.workspace.id}`;
    const created = await api(base, token, 'POST', `${wsPath}/computers`, {
      name: 'bench',
      size: 'small',
      image: 'busybox',
    });
    if (created.status !== 202) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    computerId = created.body.computer.id;
    const op = await api(base, token, 'GET', `/v1/operations/${created.body.operations[0].id}?wait=30`);
    if (op.body.operation.state !== 'succeeded') throw new Error(`create: ${JSON.stringify(op.body)}`);
    const computer = { ...created.body.computer, labels: created.body.computer.labels ?? {} };
    const container = `svc-${INSTANCE}-${computerId}`;

    const agent = new http.Agent({ keepAlive: true });
    const engineDriver = new DockerDriver({
      docker,
      catalog: { image: async () => undefined, size: async () => undefined },
      instance: INSTANCE,
      execAgent: false,
    });
    driver = new DockerDriver({
      docker,
      catalog: { image: async () => undefined, size: async () => undefined },
      instance: INSTANCE,
    });
    const execPath = `${wsPath}/computers/${computerId}/exec`;
    const ways = {
      bare: () => bareExec(SOCKET, agent, container),
      engineDriver: async () => {
        const result = await engineDriver.exec(computer, {
          argv: ['echo', 'hi'],
          timeoutMs: 10_000,
          maxOutputBytes: 65_536,
          signal: AbortSignal.timeout(15_000),
        });
        if (result.exitCode !== 0 || Buffer.from(result.stdout).toString() !== 'hi\n')
          throw new Error(`driver exec: ${JSON.stringify(result)}`);
      },
      driver: async () => {
        const result = await driver.exec(computer, {
          argv: ['echo', 'hi'],
          timeoutMs: 10_000,
          maxOutputBytes: 65_536,
          signal: AbortSignal.timeout(15_000),
        });
        if (result.exitCode !== 0 || Buffer.from(result.stdout).toString() !== 'hi\n')
          throw new Error(`driver exec: ${JSON.stringify(result)}`);
      },
      floor: async () => {
        const res = await api(base, token, 'GET', `${wsPath}/computers/${computerId}`);
        if (res.status !== 200) throw new Error(`get computer: ${res.status} ${JSON.stringify(res.body)}`);
      },
      api: async () => {
        const res = await api(base, token, 'POST', execPath, { argv: ['echo', 'hi'] }, { idempotent: false });
        if (res.status !== 200 || res.body.execution.exit_code !== 0)
          throw new Error(`api exec: ${res.status} ${JSON.stringify(res.body)}`);
        inServer.push(res.body.execution.duration_ms);
      },
      apiKeyed: async () => {
        const res = await api(base, token, 'POST', execPath, { argv: ['echo', 'hi'] });
        if (res.status !== 200 || res.body.execution.exit_code !== 0)
          throw new Error(`api exec: ${res.status} ${JSON.stringify(res.body)}`);
      },
    };
    /** `duration_ms` of each answer: the driver's exec as timed inside the server. */
    const inServer = [];
    const times = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
    for (let round = 0; round < WARMUP + SAMPLES; round++) {
      for (const [name, run] of Object.entries(ways)) {
        const start = performance.now();
        await run();
        if (round >= WARMUP) times[name].push(performance.now() - start);
        else if (name === 'api') inServer.length = 0;
        // What a call leaves the Engine to do after it answered (an earlier driver ran a clean-up exec)
        // must not land on the next way's measurement.
        await new Promise((resolve) => setTimeout(resolve, GAP_MS));
      }
    }
    const stats = Object.fromEntries(
      Object.entries(times).map(([name, list]) => {
        const sorted = [...list].sort((a, b) => a - b);
        return [
          name,
          { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), p99: quantile(sorted, 0.99) },
        ];
      }),
    );
    const labels = {
      bare: 'bare Engine API exec (kept-alive socket)',
      engineDriver: 'driver exec, Engine exec only (in-process)',
      driver: 'driver exec, exec agent (in-process)',
      floor: 'GET …/computers/{computer} (server floor)',
      api: 'POST …/exec through the server',
      apiKeyed: 'POST …/exec, with an Idempotency-Key',
    };
    process.stdout.write(
      `exec of \`echo hi\`, ${SAMPLES} samples each (after ${WARMUP} warm-up), interleaved, ${GAP_MS} ms apart\n`,
    );
    for (const [name, s] of Object.entries(stats)) {
      process.stdout.write(
        `  ${labels[name].padEnd(44)} p50 ${String(round(s.p50)).padStart(6)} ms  p95 ${String(round(s.p95)).padStart(6)} ms` +
          `  p99 ${String(round(s.p99)).padStart(6)} ms  ×${(s.p50 / stats.bare.p50).toFixed(2)} p50` +
          `  ×${(s.p95 / stats.bare.p95).toFixed(2)} p95  ×${(s.p99 / stats.bare.p99).toFixed(2)} p99\n`,
      );
    }
    const driverInServer = quantile(
      [...inServer].sort((a, b) => a - b),
      0.5,
    );
    process.stdout.write(
      `  of which the driver's exec inside the server (duration_ms)  p50 ${driverInServer} ms; the rest is HTTP, auth, the handler\n`,
    );
  } finally {
    driver?.close();
    if (server) await stopChild(server.child, { killAfterMs: 3000 });
    await removeInstance(docker, INSTANCE);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
