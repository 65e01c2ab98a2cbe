import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { childEnv, stopChild } from '@svc/tools/child-process';
import { startStreamFront } from '@svc/tools/spec-mock';

/** A running Prism mock started by {@link startPrism}. */
export interface PrismMock {
  /** `http://127.0.0.1:<port>`: Prism serves the spec's paths without the `/v1` server prefix. */
  readonly baseUrl: string;
  readonly pid: number;
  /** Stops this Prism (by its pid, never by name) and removes its copy of the document. */
  stop(): Promise<void>;
}

/** Options of {@link startPrism}. */
export interface PrismOptions {
  /** The bundled OpenAPI document to mock. Default: `@svc/contract`'s copy of `spec/dist/openapi.json`. */
  document?: string;
  /** Default: a free port. */
  port?: number;
  /** Give up waiting for Prism to listen after this long. Default 60 000 ms. */
  timeoutMs?: number;
  /**
   * Run `prism proxy` in front of this server instead of mocking: every request is forwarded to
   * `<upstream><path>` (so include the server's `/v1`), and what breaks the spec is reported in each
   * response's `sl-violations` header. Without `--errors`: with it Prism answers invalid requests itself
   * (422/401 problem+json) and the server's own 400/401/404/405 would never be seen.
   */
  upstream?: string;
  /** Mock with generated data (`prism mock -d`, json-schema-faker) instead of the spec's examples. */
  dynamic?: boolean;
}

const require = createRequire(import.meta.url);

/** A free TCP port on 127.0.0.1, found by binding port 0. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Starts `prism mock` in static mode (answers from the spec's examples, no `-d`), validating requests
 * (`--errors`) with CORS on, on 127.0.0.1; or, given `upstream`, `prism proxy` in front of a server. The document is copied first: Prism watches its file and
 * restarts when it changes, and a rebuild of the spec must not restart a mock in the middle of a run.
 * A mock is `pnpm mock`'s: Prism on a port of its own behind the front of `@svc/tools/spec-mock`, which
 * serves the event streams Prism cannot (it answers them 500) and proxies everything else; `baseUrl` is
 * the front's.
 *
 * @example
 * import { startPrism } from '@svc/contract-tests/prism';
 * const prism = await startPrism();
 * const res = await fetch(`${prism.baseUrl}/health`);
 * await prism.stop();
 */
export async function startPrism(options: PrismOptions = {}): Promise<PrismMock> {
  const source = options.document ?? require.resolve('@svc/contract/openapi.json');
  const dir = mkdtempSync(join(tmpdir(), 'svc-prism-'));
  const document = join(dir, 'openapi.json');
  copyFileSync(source, document);
  const port = options.upstream ? (options.port ?? (await freePort())) : await freePort();
  const cli = join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');
  const mode = options.upstream
    ? ['proxy', document, options.upstream]
    : ['mock', document, '--errors', ...(options.dynamic ? ['--dynamic'] : [])];
  const child = spawn(
    process.execPath,
    [cli, ...mode, '--host', '127.0.0.1', '--port', String(port), '--cors', '-v', 'warn'],
    { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const prismUrl = `http://127.0.0.1:${port}`;
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  let front: { url: string; close(): Promise<void> } | undefined;
  const stop = () =>
    (front?.close() ?? Promise.resolve())
      .then(() => stopChild(child, { killAfterMs: 3000 }))
      .finally(() => rmSync(dir, { recursive: true, force: true }));
  try {
    await waitUntilListening(prismUrl, child, options.timeoutMs ?? 60_000);
  } catch (error) {
    await stop();
    throw new Error(`Prism did not start on ${prismUrl}: ${(error as Error).message}\n${output}`);
  }
  if (child.pid === undefined) throw new Error('Prism has no pid');
  if (options.upstream) return { baseUrl: prismUrl, pid: child.pid, stop };
  front = await startStreamFront({
    document: JSON.parse(readFileSync(document, 'utf8')),
    upstream: prismUrl,
    port: options.port ?? 0,
    dynamic: options.dynamic === true,
  });
  return { baseUrl: front.url, pid: child.pid, stop };
}

async function waitUntilListening(baseUrl: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${baseUrl}/health`);
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms`);
}
