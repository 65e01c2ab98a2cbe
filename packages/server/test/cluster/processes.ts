// Real server processes (dist/main.js) sharing one PostgreSQL database, for the cluster tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, stopChild } from '@svc/tools/child-process';
import { createTestDatabase } from '@svc/tools/postgres';
import pg from 'pg';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import type { KeyFile } from '../../src/identity/auth/keypair.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** The secret key every replica of this test process shares (SVC_SECRET_KEY). */
export const CLUSTER_SECRET_KEY = randomBytes(32).toString('base64url');

/** Every replica answers for this public address (tokens' iss/aud), as replicas behind one balancer do. */
export const PUBLIC_BASE = 'http://svc.cluster.test/v1';

/** One server process. */
export interface Replica {
  name: string;
  /** `http://127.0.0.1:<port>/v1`: where this replica listens. */
  url: string;
  pid: number;
  child: ChildProcess;
  /** The last 20,000 characters it printed. */
  output(): string;
  /**
   * The first 20,000 characters it printed: its start-up lines (the metrics address, "listening"),
   * which a busy replica's request log soon pushes out of {@link Replica.output}.
   */
  startup(): string;
}

/** A fresh database of its own on the PostgreSQL of `adminUrl`, with two handles: its URL and a pool. */
export interface ClusterDatabase {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

export async function createClusterDatabase(adminUrl: string): Promise<ClusterDatabase> {
  const database = await createTestDatabase({ prefix: 'svc_cluster', adminUrl });
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // An idle client whose connection ends (the database dropped by force at the end of a suite) must
  // not be an uncaught exception in the test process; a query that fails still fails its test.
  pool.on('error', () => {});
  return {
    url: database.url,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      await database.drop();
    },
  };
}

/** A temp directory for key files; removed by `remove`. */
export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Starts `node dist/main.js` on PORT=0 against `databaseUrl` and waits for its "listening" line. The
 * first replica on an empty database bootstraps and writes `keyFile`; later ones find it done.
 */
export async function startReplica(
  name: string,
  options: { databaseUrl: string; keyFile: string; env?: Record<string, string> },
): Promise<Replica> {
  if (!existsSync(MAIN))
    throw new Error(`${MAIN} is missing: build the server first (turbo runs build before test)`);
  let output = '';
  const child = spawn(process.execPath, [MAIN], {
    env: childEnv({
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_BASE_URL: PUBLIC_BASE,
      DATABASE_URL: options.databaseUrl,
      SVC_BOOTSTRAP_KEY_FILE: options.keyFile,
      SVC_RATE_LIMITS: 'off',
      // Replicas of one database share the key that seals its signing keys (as in production).
      SVC_SECRET_KEY: CLUSTER_SECRET_KEY,
      ...options.env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let startup = '';
  const append = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    if (startup.length < 20_000) startup = (startup + text).slice(0, 20_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /svc-server listening on (http:\/\/\S+)/.exec(startup);
    if (match?.[1]) {
      if (child.pid === undefined) throw new Error(`${name} has no pid`);
      return {
        name,
        url: `${match[1]}/v1`,
        pid: child.pid,
        child,
        output: () => output,
        startup: () => startup,
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
      throw new Error(`replica ${name} did not start (exit ${child.exitCode}):\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sends `signal` to the replica's pid and waits for it to exit (SIGTERM drains, SIGKILL is a crash). */
export async function stopReplica(
  replica: Replica,
  signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM',
): Promise<void> {
  await stopChild(replica.child, { signal, killAfterMs: 15_000 });
}

/** An access token for the bootstrap service account, exchanged at `replica`. */
export async function accessToken(replica: Replica, keyFilePath: string): Promise<string> {
  const file = JSON.parse(readFileSync(keyFilePath, 'utf8')) as KeyFile;
  const assertion = await signAssertion(file, { tokenUrl: `${PUBLIC_BASE}/auth/token` });
  const res = await fetch(`${replica.url}/auth/token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${assertion}` },
  });
  const body = (await res.json()) as { token?: { access_token: string } };
  if (res.status !== 200 || !body.token)
    throw new Error(`token exchange: ${res.status} ${JSON.stringify(body)}`);
  return body.token.access_token;
}

/** One answer, with the headers the tests compare. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  text: string;
  replayed: boolean;
}

/** One JSON call to a replica. */
export async function call(
  replica: Replica,
  token: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.key) headers['idempotency-key'] = options.key;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${replica.url}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    text,
    replayed: res.headers.get('idempotent-replayed') === 'true',
  };
}

/**
 * Sends the same request until it is not `409 idempotency_key_in_use` (the first request with that key
 * still running on some replica), as a client honouring Retry-After would.
 */
export async function callSettled(
  replica: Replica,
  token: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown } = {},
): Promise<{ answer: Answer; inUse: number }> {
  let inUse = 0;
  for (;;) {
    const answer = await call(replica, token, method, path, options);
    const code = (answer.body.error as { code?: string } | undefined)?.code;
    if (answer.status !== 409 || code !== 'idempotency_key_in_use') return { answer, inUse };
    inUse++;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A unique Idempotency-Key. */
export function newKey(): string {
  return `cluster-${randomBytes(9).toString('hex')}`;
}
