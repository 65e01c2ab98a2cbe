// Launch hardening: no client can take the server down. The built server (dist/main.js, PGlite, the
// simulated driver; then the Docker driver for the uploads, whose Engine extracts as it reads) is sent
// requests of every operation (each has a body or a stream, in the request or the answer), cut off at seeded random points of the
// request and of the answer (after the headers, mid-body, a declared length longer than sent, a
// chunked body cut mid-chunk, a half-close, a reset, a reader that stops reading, a pipelined request
// after a cut), in bursts, to 127.0.0.1 only, each cut bounded in time. It passes when the process never
// exits, health answers after each burst, an upload cut off at any point leaves its path as it was or
// whole, no operation or Idempotency-Key is left in flight, and memory comes back to its warm level.
//
// FAULT_SEED reproduces a run (it is printed); FAULT_CUTS sets the count (default 10,000).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { byteRequestBody, byteResponse, listOperations, loadDocument } from '@svc/contract';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { accessToken, type Replica, startReplica, stopReplica, tempDir } from '../cluster/processes.js';
import { describeDocker } from '../support/docker.js';
import { ARCHIVE_NAMES, catalog, type MadeRequest, type Resources, type Target } from './catalog.js';
import { CUT_KINDS, type Cut, cutRequest, DROPS, seeded } from './cuts.js';

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CUTS = Number(process.env.FAULT_CUTS ?? 10_000);
const DOCKER_CUTS = Number(process.env.FAULT_DOCKER_CUTS ?? 240);
const CONCURRENCY = 16;
const BURST = 500;
/** Bodies of uploads, at most (a few are larger than the server's whole-read threshold on Docker). */
const MAX_UPLOAD = 1536 * 1024;
/** The same bound as the soak's: a leak that grows with the requests, not V8's step in heap size. */
const RSS_GROWTH_RATIO = 2;
const RSS_GROWTH_BYTES = 160 * 1024 * 1024;

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

interface Server {
  replica: Replica;
  port: number;
  token: string;
  resources: Resources;
  get(path: string): Promise<Response>;
}

async function startServer(
  env: Record<string, string>,
  image: string,
): Promise<{ server: Server; remove(): void }> {
  const dir = tempDir();
  const replica = await startReplica('faults', {
    databaseUrl: '',
    keyFile: join(dir.path, 'key.json'),
    env: { SVC_DATA_DIR: join(dir.path, 'data'), ...env },
  });
  const token = await accessToken(replica, join(dir.path, 'key.json'));
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${replica.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(method === 'POST' ? { 'idempotency-key': `setup-${Math.random()}` } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const running = async (name: string) => {
    const created = await send('POST', '/workspaces/default/computers', { name, size: 'small', image });
    expect(created.status).toBe(202);
    for (let i = 0; i < 300; i++) {
      const answer = (await (await send('GET', `/workspaces/default/computers/${name}`)).json()) as {
        computer: { state: string };
      };
      if (answer.computer.state === 'running') return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${name} did not start`);
  };
  await running('box');
  await running('other');
  const run = (await (
    await send('POST', '/workspaces/default/computers/box/run', { argv: ['echo', 'hi'] })
  ).json()) as { operations: { id: string }[] };
  const operation = run.operations[0]?.id as string;
  const resources: Resources = {
    workspace: 'default',
    computer: 'box',
    other: 'other',
    operation,
    filePath: '/home/svc/seed.bin',
    archiveDir: '/home/svc/arch',
  };
  const port = Number(new URL(replica.url).port);
  const server: Server = { replica, port, token, resources, get: (path) => send('GET', path) };
  return {
    server,
    remove: () => dir.remove(),
  };
}

/** The bytes at a computer's path, or undefined when there is none. */
async function fileAt(server: Server, path: string): Promise<Buffer | undefined> {
  const answer = await server.get(`/workspaces/default/computers/box/files?path=${encodeURIComponent(path)}`);
  if (answer.status === 404) return undefined;
  expect(answer.status).toBe(200);
  return Buffer.from(await answer.arrayBuffer());
}

/** What an upload's path may hold: its content before, or one upload's whole. */
class Allowed {
  readonly file = new Set<string>();
  readonly entries = new Map<string, Set<string>>(ARCHIVE_NAMES.map((name) => [name, new Set<string>()]));
  add(made: MadeRequest): void {
    if (made.upload?.kind === 'file') this.file.add(sha(made.upload.bytes));
    if (made.upload?.kind === 'archive')
      for (const [name, bytes] of made.upload.entries) this.entries.get(name)?.add(sha(bytes));
  }
}

/** Cuts `count` requests of `targets` in bursts; returns what it counted. */
async function storm(
  server: Server,
  targets: Target[],
  count: number,
  random: ReturnType<typeof seeded>,
  allowed: Allowed,
  onBurst: (done: number) => Promise<void>,
): Promise<{ cuts: number; byKind: Record<string, number>; ops: Set<string>; keys: MadeRequest[] }> {
  const byKind: Record<string, number> = {};
  const ops = new Set<string>();
  const keys: MadeRequest[] = [];
  let done = 0;
  while (done < count) {
    const burst = Math.min(BURST, count - done);
    // Drawn in order before any is sent, so the seed alone decides every cut.
    const plans: { target: Target; cut: Cut; size: number }[] = [];
    for (let i = 0; i < burst; i++) {
      const target = random.pick(targets);
      const size = random.next() < 0.1 ? random.int(MAX_UPLOAD) : random.int(64 * 1024);
      plans.push({
        target,
        size,
        cut: {
          kind: random.pick(CUT_KINDS),
          drop: random.pick(DROPS),
          at: random.int(size + 600),
          delayMs: random.int(30),
        },
      });
    }
    let next = 0;
    const worker = async () => {
      for (;;) {
        const plan = plans[next++];
        if (!plan) return;
        const made = await plan.target.make(plan.size);
        // A request whose every byte was sent may be taken whole, whatever the client does next; of
        // an archive, each entry is taken whole or not at all, whatever was sent after it.
        if (['after-body', 'mid-response', 'stalled-reader'].includes(plan.cut.kind)) allowed.add(made);
        else if (made.upload?.kind === 'archive') allowed.add(made);
        await cutRequest(server.port, made, plan.cut);
        byKind[plan.cut.kind] = (byKind[plan.cut.kind] ?? 0) + 1;
        ops.add(plan.target.op.operationId);
        if (made.key && made.method === 'POST' && keys.length < 40 && made.body.length > 0) keys.push(made);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    done += burst;
    await onBurst(done);
  }
  return { cuts: done, byKind, ops, keys };
}

/** After a burst: the process is there and health answers within 5 s. */
async function healthy(server: Server, done: number): Promise<void> {
  expect(
    server.replica.child.exitCode,
    `the server exited after ${done} cuts (seed ${SEED}):\n${server.replica.output().slice(-3000)}`,
  ).toBeNull();
  const answer = await fetch(`${server.replica.url}/health`, { signal: AbortSignal.timeout(5_000) });
  expect(answer.status, `health after ${done} cuts (seed ${SEED})`).toBe(200);
  await answer.body?.cancel();
}

/** The upload paths hold their seed or one whole upload; no temporary part is left beside them. */
async function noPartialFiles(server: Server, allowed: Allowed): Promise<void> {
  const file = await fileAt(server, server.resources.filePath);
  expect(file, 'the seed file is gone').toBeDefined();
  expect(
    allowed.file.has(sha(file as Buffer)),
    `${server.resources.filePath} holds a partial upload (seed ${SEED})`,
  ).toBe(true);
  for (const name of ARCHIVE_NAMES) {
    const entry = await fileAt(server, `${server.resources.archiveDir}/${name}`);
    if (entry === undefined) continue;
    expect(allowed.entries.get(name)?.has(sha(entry)), `${name} holds a partial entry (seed ${SEED})`).toBe(
      true,
    );
  }
  for (const dir of ['/home/svc', server.resources.archiveDir]) {
    const listed = await server.get(
      `/workspaces/default/computers/box/files/entries?path=${encodeURIComponent(dir)}`,
    );
    if (listed.status === 404) continue;
    const { files } = (await listed.json()) as { files: { name: string }[] };
    expect(files.map((entry) => entry.name).filter((name) => name.startsWith('.svc-upload-'))).toEqual([]);
  }
}

/** No operation of the workspace is left pending or running, within 30 s of the storm's end. */
async function noStuckOperations(server: Server): Promise<void> {
  const deadline = Date.now() + 30_000;
  let open: unknown[] = [];
  while (Date.now() < deadline) {
    const answer = (await (await server.get('/workspaces/default/operations?limit=100')).json()) as {
      operations: { id: string; type: string; state: string }[];
    };
    open = answer.operations.filter((op) => op.state === 'pending' || op.state === 'running');
    if (open.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  expect(open, 'operations left in flight').toEqual([]);
}

/** A key whose request was cut is not held in flight: the same request again gets an answer. */
async function noStuckKeys(server: Server, keys: MadeRequest[]): Promise<void> {
  for (const made of keys) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const answer = await fetch(`http://127.0.0.1:${server.port}${made.path}`, {
        method: made.method,
        headers: made.headers,
        body: new Uint8Array(made.body),
      });
      const text = await answer.text();
      if (answer.status !== 409 || !text.includes('idempotency_key_in_use')) break;
      expect(Date.now() < deadline, `${made.path}: key ${made.key} still in use`).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function seedUploads(server: Server, allowed: Allowed): Promise<void> {
  const seed = Buffer.from('the seed, before any upload\n');
  const put = await fetch(
    `${server.replica.url}/workspaces/default/computers/box/files?path=${encodeURIComponent(server.resources.filePath)}`,
    {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/octet-stream' },
      body: seed,
    },
  );
  expect(put.status).toBe(200);
  allowed.file.add(sha(seed));
}

function report(
  label: string,
  result: Awaited<ReturnType<typeof storm>>,
  rss: { warm: number; end: number },
) {
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  console.log(
    `${label}: seed ${SEED}, ${result.cuts} cuts over ${result.ops.size} operations, 0 exits, 0 partial files; ` +
      `by kind ${JSON.stringify(result.byKind)}; RSS warm ${mib(rss.warm)}, end ${mib(rss.end)}`,
  );
}

let simulated: { server: Server; remove(): void } | undefined;
beforeAll(async () => {
  simulated = await startServer({}, 'ubuntu-2404');
}, 120_000);
afterAll(async () => {
  if (simulated) await stopReplica(simulated.server.replica);
  simulated?.remove();
});

test(`every operation with a body or a stream, cut ${CUTS} times: the process stays up and nothing is left half-done`, {
  timeout: 600_000,
}, async () => {
  const server = (simulated as { server: Server }).server;
  const random = seeded(SEED);
  const allowed = new Allowed();
  await seedUploads(server, allowed);
  const targets = catalog(server.resources, server.token);
  expect(targets.length).toBe(listOperations(loadDocument()).length);
  let warm = 0;
  const result = await storm(server, targets, CUTS, random, allowed, async (done) => {
    await healthy(server, done);
    // Warm after the second burst (or the first, for a run of fewer cuts).
    if (warm === 0 && (done >= BURST * 2 || done >= CUTS)) warm = rssOf(server.replica.pid);
  });
  await noPartialFiles(server, allowed);
  await noStuckOperations(server);
  await noStuckKeys(server, result.keys);
  await healthy(server, result.cuts);
  const end = rssOf(server.replica.pid);
  report('simulated', result, { warm, end });
  expect(result.ops.size).toBe(targets.length);
  expect(end).toBeLessThanOrEqual(Math.max(warm * RSS_GROWTH_RATIO, warm + RSS_GROWTH_BYTES));
  expect(server.replica.output()).not.toMatch(/Unhandled|uncaught/i);
});

describeDocker('transport faults on the Docker driver', (engine) => {
  let docker: { server: Server; remove(): void } | undefined;
  beforeAll(async () => {
    docker = await startServer(
      { SVC_DRIVER: 'docker', SVC_DOCKER_INSTANCE: engine.instance, SVC_DOCKER_SOCKET: engine.socketPath },
      'busybox',
    );
  }, 120_000);
  afterAll(async () => {
    if (docker) await stopReplica(docker.server.replica);
    docker?.remove();
  });

  test(`uploads and downloads cut ${DOCKER_CUTS} times leave every path as it was or whole`, {
    timeout: 600_000,
  }, async () => {
    const server = (docker as { server: Server }).server;
    const random = seeded(SEED + 1);
    const allowed = new Allowed();
    await seedUploads(server, allowed);
    // The byte operations on a computer's files, by media type (a screen's picture, `image/png`, needs
    // a desktop, which this busybox computer is not: it would answer 409 before any byte moved).
    const document = loadDocument();
    const files = new Set(['application/octet-stream', 'application/x-tar']);
    const targets = catalog(server.resources, server.token).filter((target) => {
      const bytes = byteRequestBody(document, target.op) ?? byteResponse(document, target.op);
      // uploads and downloads only: a terminal's input (`send…`) is bytes into a program, no file
      return (
        bytes !== undefined && files.has(bytes.mediaType) && /^(up|down)load/.test(target.op.operationId)
      );
    });
    expect(targets.map((target) => target.op.operationId).sort()).toEqual([
      'downloadComputerArchive',
      'downloadComputerFile',
      'uploadComputerArchive',
      'uploadComputerFile',
    ]);
    const result = await storm(server, targets, DOCKER_CUTS, random, allowed, (done) =>
      healthy(server, done),
    );
    // A failed write's temporary parts are removed at once and again 2 s and 5 s later (the Engine may
    // still be extracting what the cut left): the check waits for the last removal.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await noPartialFiles(server, allowed);
    await healthy(server, result.cuts);
    report('docker', result, { warm: 0, end: rssOf(server.replica.pid) });
    expect(server.replica.output()).not.toMatch(/Unhandled|uncaught/i);
  });
});
