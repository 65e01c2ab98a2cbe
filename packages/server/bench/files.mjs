// A file into a computer and back out, through the API against `docker cp` of the same file, in one run,
// against one running busybox container (Docker driver):
//   - `docker cp <file> <container>:/home/svc/…` and `docker cp <container>:/home/svc/… <file>`: the
//     baseline (the docker CLI over the Engine socket, the same archive endpoints the driver uses);
//   - PUT …/files?path= (application/octet-stream, streamed from disk with Content-Length) and
//     GET …/files?path= (streamed to disk) through the built server (SVC_DRIVER=docker, rate limits and
//     limits as shipped, loopback).
// Each transfer is checked byte for byte (SHA-256). The ways alternate in rounds, so load on a shared
// machine falls on all of them alike. Prints the median throughput of each, the API's ratio to docker
// cp, and the server's resident memory: before the transfers, its peak during them (sampled from
// /proc every 10 ms, and the kernel's high-water mark VmHWM), and the growth. Needs `pnpm build` and
// `pnpm images:build`.
//
//   node packages/server/bench/files.mjs [--mb 100] [--rounds 3] [--socket /var/run/docker.sock]
//        [--cpu-prof <dir>] [--client fetch|curl|svc] [--server-node-flags="<flags>"] [--heap-tuning on|off]
//
// `--client curl` moves the API's bytes with curl (`-T`, `-o`) instead of Node's fetch (the default):
// a client as light as the docker CLI, so that the ratio is the server's and not the client's.
// `--client svc` runs `svc computers cp` (the built CLI, a Node process per copy, as `docker cp` is a
// process per copy): the command a person types against the one they would type for Docker.
//
// `--server-node-flags=<flags>` starts the server's Node with these flags (space-separated), e.g.
// `--server-node-flags=--max-semi-space-size=2`: an operator's choice (decision 0017), not the shipped
// settings, and said so in the first line printed.
//
// `--heap-tuning off` starts the server with `SVC_FILES_HEAP_TUNING=off`: V8's heap as Node leaves it,
// without the young collections during transfers and the larger growing factor (decision 0018), to
// measure what they bring; also not the shipped settings, and said so.
//
// `--cpu-prof` runs the server under `node --cpu-prof` (server-files.cpuprofile in <dir>; summarise it
// with bench/profile-summary.mjs).
//
// `--mb 1024` moves 1 GiB each way: the memory bound of a large transfer.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stopChild } from '@svc/tools/child-process';
import { dockerClient } from '../dist/compose/docker.js';
import { removeInstance } from './engine.mjs';
import { api, bootstrapToken, startServer } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', '..', 'cli', 'dist', 'main.js');
const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    socket: { type: 'string', default: process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock' },
    'cpu-prof': { type: 'string' },
    client: { type: 'string', default: 'fetch' },
    'server-node-flags': { type: 'string', default: '' },
    'heap-tuning': { type: 'string', default: 'on' },
  },
});
const BYTES = Math.round(Number(values.mb) * 1024 * 1024);
const ROUNDS = Number(values.rounds);
const SOCKET = values.socket;
const INSTANCE = `bench-files-${process.pid}`;
const PROFILE_DIR = values['cpu-prof'];
const CLIENT = values.client;
const SERVER_NODE_FLAGS = values['server-node-flags'].split(' ').filter(Boolean);
const HEAP_TUNING = values['heap-tuning'];
if (HEAP_TUNING !== 'on' && HEAP_TUNING !== 'off') throw new Error('--heap-tuning is on or off');
if (!['fetch', 'curl', 'svc'].includes(CLIENT))
  throw new Error(`--client: fetch, curl or svc, not ${CLIENT}`);

/** Runs a command to its end; answers its stdout, rejects with its stderr when it fails. */
function run(command, args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(' ')}: ${stderr}`)),
    );
  });
}

/** Writes `bytes` random bytes to `file` in 1 MiB pieces; answers their SHA-256. */
async function makeFile(file, bytes) {
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  for (let left = bytes; left > 0; left -= 1 << 20) {
    const piece = randomBytes(Math.min(left, 1 << 20));
    hash.update(piece);
    if (!out.write(piece)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
  return hash.digest('hex');
}

async function sha256Of(file) {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** Resident memory of a process, in bytes: now, and the kernel's high-water mark. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

/** CPU time a process has used so far (user + system), in ms, from /proc. */
function cpuOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the `pid (comm) ` prefix.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/** The server as this bench runs it: with the profiler's flags when asked, and SERVER_NODE_FLAGS. */
function startProfiledServer(env) {
  const profile = PROFILE_DIR
    ? [
        '--cpu-prof',
        '--cpu-prof-dir',
        PROFILE_DIR,
        '--cpu-prof-name',
        'server-files.cpuprofile',
        '--import',
        join(here, 'exit-on-signal.mjs'),
      ]
    : [];
  return startServer(env, { nodeArgs: [...profile, ...SERVER_NODE_FLAGS] });
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const mbps = (ms) => BYTES / 1024 / 1024 / (ms / 1000);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-files-'));
  const keyFile = join(dir, 'bootstrap-key.json');
  const source = join(dir, 'source.bin');
  const docker = dockerClient(SOCKET);
  let server;
  let computerId;
  try {
    const want = await makeFile(source, BYTES);
    server = await startProfiledServer({
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_BOOTSTRAP_KEY_FILE: keyFile,
      SVC_DRIVER: 'docker',
      SVC_DOCKER_SOCKET: SOCKET,
      SVC_DOCKER_INSTANCE: INSTANCE,
      LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
      SVC_FILES_HEAP_TUNING: HEAP_TUNING,
    });
    const base = server.url;
    const token = await bootstrapToken(base, keyFile);
    const ws = await api(base, token, 'POST', '/v1/workspaces', { name: `bench-files-${process.pid}` });
    if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${JSON.stringify(ws.body)}`);
    const wsPath = `/v1/workspaces/${ws.body.workspace.id}`;
    const created = await api(base, token, 'POST', `${wsPath}/computers`, {
      name: 'bench',
      size: 'small',
      image: 'busybox',
    });
    if (created.status !== 202) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    computerId = created.body.computer.id;
    const op = await api(base, token, 'GET', `/v1/operations/${created.body.operations[0].id}?wait=60`);
    if (op.body.operation.state !== 'succeeded') throw new Error(`create: ${JSON.stringify(op.body)}`);
    const container = `svc-${INSTANCE}-${computerId}`;
    const filesPath = `${wsPath}/computers/${computerId}/files`;
    const dockerEnv = { DOCKER_HOST: `unix://${SOCKET}` };
    const svcEnv = {
      SVC_BASE_URL: `${base}/v1`,
      SVC_ACCESS_TOKEN: token,
      SVC_CONFIG_DIR: join(dir, 'svc-config'),
    };
    const remote = (round) => `${ws.body.workspace.id}/${computerId}:/home/svc/api-${round}.bin`;

    const ways = {
      cpIn: async (round) => {
        await run('docker', ['cp', source, `${container}:/home/svc/cp-${round}.bin`], dockerEnv);
      },
      apiIn: async (round) => {
        if (CLIENT === 'svc') {
          await run(process.execPath, [CLI, 'computers', 'cp', source, remote(round)], svcEnv);
          return;
        }
        if (CLIENT === 'curl') {
          const out = await run('curl', [
            '-sS',
            '-T',
            source,
            '-H',
            `authorization: Bearer ${token}`,
            '-H',
            'content-type: application/octet-stream',
            '-w',
            '\\n%{http_code}',
            `${base}${filesPath}?path=/home/svc/api-${round}.bin`,
          ]);
          const [text, status] = [out.slice(0, out.lastIndexOf('\n')), out.slice(out.lastIndexOf('\n') + 1)];
          const body = JSON.parse(text);
          if (status !== '200' || body.file.size !== BYTES) throw new Error(`upload: ${status} ${text}`);
          return;
        }
        const res = await fetch(`${base}${filesPath}?path=/home/svc/api-${round}.bin`, {
          method: 'PUT',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/octet-stream',
            'content-length': String(statSync(source).size),
          },
          // 1 MiB pieces, as `svc computers cp` reads a file: a web stream's cost is per piece.
          body: Readable.toWeb(createReadStream(source, { highWaterMark: 1 << 20 })),
          duplex: 'half',
        });
        const body = await res.json();
        if (res.status !== 200 || body.file.size !== BYTES)
          throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
      },
      cpOut: async (round) => {
        const out = join(dir, `cp-${round}.out`);
        await run('docker', ['cp', `${container}:/home/svc/cp-${round}.bin`, out], dockerEnv);
        return out;
      },
      apiOut: async (round) => {
        const out = join(dir, `api-${round}.out`);
        if (CLIENT === 'svc') {
          await run(process.execPath, [CLI, 'computers', 'cp', remote(round), out], svcEnv);
          return out;
        }
        if (CLIENT === 'curl') {
          await run('curl', [
            '-sS',
            '-f',
            '-o',
            out,
            '-H',
            `authorization: Bearer ${token}`,
            `${base}${filesPath}?path=/home/svc/api-${round}.bin`,
          ]);
          return out;
        }
        const res = await fetch(`${base}${filesPath}?path=/home/svc/api-${round}.bin`, {
          headers: { authorization: `Bearer ${token}` },
        });
        if (res.status !== 200) throw new Error(`download: ${res.status} ${await res.text()}`);
        await pipeline(Readable.fromWeb(res.body), createWriteStream(out));
        return out;
      },
    };
    const times = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
    const cpu = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
    const before = memoryOf(server.child.pid);
    let peak = before.rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, memoryOf(server.child.pid).rss);
    }, 10);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, way] of Object.entries(ways)) {
          const start = performance.now();
          const cpuStart = cpuOf(server.child.pid);
          const out = await way(round);
          times[name].push(performance.now() - start);
          cpu[name].push(cpuOf(server.child.pid) - cpuStart);
          if (typeof out === 'string') {
            const got = await sha256Of(out);
            if (got !== want) throw new Error(`${name}: the bytes out differ from the bytes in`);
            rmSync(out);
          }
        }
      }
    } finally {
      clearInterval(sampler);
    }
    const after = memoryOf(server.child.pid);
    const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
    const line = (label, name, baseline) => {
      const ms = median(times[name]);
      const ratio =
        baseline === undefined
          ? ''
          : `  ×${(mbps(ms) / mbps(median(times[baseline]))).toFixed(2)} of docker cp's throughput, ` +
            `server CPU ${Math.round(median(cpu[name]))} ms`;
      process.stdout.write(
        `  ${label.padEnd(38)} ${String(Math.round(ms)).padStart(6)} ms  ${mbps(ms).toFixed(1).padStart(7)} MB/s${ratio}\n`,
      );
    };
    process.stdout.write(
      `${values.mb} MiB each way, ${ROUNDS} rounds, interleaved; medians; bytes checked (SHA-256); API client ${CLIENT}` +
        `${SERVER_NODE_FLAGS.length ? `; server started with node ${SERVER_NODE_FLAGS.join(' ')} (NOT as shipped)` : ''}` +
        `${HEAP_TUNING === 'off' ? '; SVC_FILES_HEAP_TUNING=off (NOT as shipped)' : ''}\n`,
    );
    line('docker cp in', 'cpIn');
    line('PUT …/files through the server', 'apiIn', 'cpIn');
    line('docker cp out', 'cpOut');
    line('GET …/files through the server', 'apiOut', 'cpOut');
    process.stdout.write(
      `  server resident memory: ${mib(before.rss)} before, peak ${mib(peak)} sampled (VmHWM ${mib(after.hwm)}), ` +
        `growth ${mib(peak - before.rss)} while moving ${mib(BYTES)} per transfer\n`,
    );
  } finally {
    if (server && PROFILE_DIR && server.child.exitCode === null) {
      // A profiled server writes its profile on exit: ask it to exit at once (bench/exit-on-signal.mjs).
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      process.kill(server.child.pid, 'SIGUSR2');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
    }
    if (server) await stopChild(server.child, { killAfterMs: 3000 });
    await removeInstance(docker, INSTANCE);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
