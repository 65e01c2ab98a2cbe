// What the benches share: a built server started as a child process, its bootstrap token, and calls.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '@svc/tools/child-process';
import { signAssertion } from '../dist/identity/auth/assertion.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

/**
 * Starts `node dist/main.js` with `env` (PORT=0 and the rest given) and waits for its "listening" line;
 * `nodeArgs` go to node before the script (a profiler's flags, say).
 *
 * @example
 * const server = await startServer({ HOST: '127.0.0.1', PORT: '0', SVC_DATA_DIR: dir });
 * // server.url: 'http://127.0.0.1:41234'
 */
export async function startServer(env, { nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, MAIN], {
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
    const match = /svc-server listening on (http:\/\/\S+)/.exec(output);
    if (match) return { url: match[1], child, output: () => output };
    if (child.exitCode !== null || Date.now() > deadline) {
      if (child.exitCode === null) process.kill(child.pid, 'SIGKILL');
      throw new Error(`server did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An access token of the bootstrap service account whose key file the server wrote to `keyFile`. */
export async function bootstrapToken(base, keyFile) {
  const key = JSON.parse(readFileSync(keyFile, 'utf8'));
  const assertion = await signAssertion(key, { tokenUrl: `${base}/v1/auth/token` });
  const res = await fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${assertion}` },
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
  return body.token.access_token;
}

/** One JSON call; a POST with a body carries a fresh Idempotency-Key unless `idempotent` is false. */
export async function api(base, token, method, path, body, { idempotent = true } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(body && idempotent ? { 'idempotency-key': randomUUID() } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The `q` quantile of an ascending list (nearest rank). */
export const quantile = (sorted, q) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
