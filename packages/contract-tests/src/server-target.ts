import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as forward, type IncomingHttpHeaders, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, stopChild } from '@svc/tools/child-process';
import { byteOperations } from '@svc/tools/mock-bytes';
import { createTestDatabase, testDatabaseUrl } from '@svc/tools/postgres';
import { streamOperations } from '@svc/tools/spec-mock';
import { type PrismMock, startPrism } from './prism.js';

/** One entry of Prism's `sl-violations` header. */
export interface PrismViolation {
  /** `['request', …]` or `['response', …]`: which side of the exchange broke the spec. */
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

/** One request that went through the proxy, with what Prism said about it. */
export interface ProxiedExchange {
  method: string;
  /** The path as the spec names it (without `/v1`), with the query. */
  path: string;
  status: number;
  violations: PrismViolation[];
  /** A stream or byte operation's request, sent to the server directly (not through `prism proxy`). */
  direct?: boolean;
}

/**
 * The violations that fail a run. Every response violation does. A request violation does unless the
 * server refused that request too (4xx): the suite sends invalid requests on purpose (no token, a bad
 * `limit`, an unknown route) to see the server's own error, and Prism rightly flags them; an invalid
 * request the server accepted (2xx) or crashed on (5xx) is a contract bug.
 *
 * @example
 * const bad = unexpectedViolations(200, [{ location: ['request', 'query', 'limit'], severity: 'Error', message: 'must be >= 1' }]);
 * // bad.length === 1: the server answered 200 to a request the spec forbids
 */
export function unexpectedViolations(
  status: number,
  violations: readonly PrismViolation[],
): PrismViolation[] {
  const refused = status >= 400 && status < 500;
  return violations.filter((v) => !(refused && v.location[0] === 'request'));
}

/** Parses an `sl-violations` header; a truncated one ("Too many violations! …") counts as one response violation. */
export function parseViolations(header: string | null | undefined): PrismViolation[] {
  if (!header) return [];
  try {
    const parsed = JSON.parse(header) as PrismViolation[];
    return parsed.map((v) => ({ ...v, location: v.location ?? [] }));
  } catch {
    return [{ location: ['response'], severity: 'Error', message: `unreadable sl-violations: ${header}` }];
  }
}

/** Which database the server under test uses. */
export type Engine = 'pglite' | 'postgres';

/** Options of {@link startServerTarget}. */
export interface ServerTargetOptions {
  engine: Engine;
  /** The admin connection used to create and drop the run's own database. Default: TEST_DATABASE_URL or local trust. */
  adminUrl?: string;
  /** `packages/server/dist/main.js` unless given. */
  serverMain?: string;
  /** SVC_SIM_STEP_MS of the server (default 50: the suite waits on many transitions). */
  simStepMs?: number;
  /** Give up on start-up after this long. Default 60 000 ms. */
  timeoutMs?: number;
}

/** A real server behind Prism's validation proxy, started by {@link startServerTarget}. */
export interface ServerTarget {
  /** `http://127.0.0.1:<port>/v1`: the public base address (tokens' `aud`, key file's `base_url`). */
  readonly baseUrl: string;
  /** The bootstrap key file of the run's fresh database (owner service account). */
  readonly keyFile: string;
  readonly engine: Engine;
  /** Every request that went through Prism, in order. */
  readonly exchanges: readonly ProxiedExchange[];
  /** The server's recent output, for failure messages. */
  serverOutput(): string;
  /** Stops the gateway, Prism and the server (by pid), drops the database and removes temp files. */
  stop(): Promise<void>;
}

/**
 * Starts the real server (a child process: PORT=0, a temp SVC_DATA_DIR and bootstrap key file, rate
 * limits out of reach; on PostgreSQL a fresh database of its own), `prism proxy` in front of it, and a gateway
 * that serves the proxy under `/v1`, the server's public base address. The gateway exists because
 * Prism serves the spec's paths without `/v1`, while assertions must name the exact token URL the
 * server knows (`<base>/v1/auth/token`); it records each exchange's status and `sl-violations`.
 *
 * @example
 * const target = await startServerTarget({ engine: 'pglite' });
 * const res = await fetch(`${target.baseUrl}/health`);
 * await target.stop();
 */
export async function startServerTarget(options: ServerTargetOptions): Promise<ServerTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-contract-'));
  const keyFile = join(dir, 'bootstrap-key.json');
  const exchanges: ProxiedExchange[] = [];
  const cleanups: (() => Promise<void>)[] = [
    () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  ];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  let server: ChildProcess | undefined;
  let output = '';
  try {
    const gateway = await startGateway(exchanges);
    cleanups.push(() => closeServer(gateway.server));
    const baseUrl = `http://127.0.0.1:${gateway.port}/v1`;

    let databaseUrl: string | undefined;
    if (options.engine === 'postgres') {
      const database = await createTestDatabase({
        prefix: 'svc_contract',
        adminUrl: options.adminUrl ?? testDatabaseUrl(),
      });
      cleanups.push(database.drop);
      databaseUrl = database.url;
    }
    // Only what the server needs: the parent's DATABASE_URL must not reach a PGlite run.
    const env = childEnv({
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_BASE_URL: baseUrl,
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_BOOTSTRAP_KEY_FILE: keyFile,
      // Not `off`: the spec requires RateLimit and RateLimit-Policy on every response, and a server with
      // limits off sends neither. Quotas no run can reach keep 429s out while the headers are real.
      SVC_RATE_LIMITS: 'principal=1000000/60,workspace_mutations=1000000/60',
      SVC_SIM_STEP_MS: String(options.simStepMs ?? 50),
      // The webhooks suite's receiver listens on 127.0.0.1, which the server refuses unless told.
      SVC_WEBHOOKS_ALLOW_LOOPBACK: 'true',
      // A webhook delivery that reaches no receiver (this target resolves no names) ends after one
      // immediate retry, so the suite can redeliver it.
      SVC_WEBHOOK_RETRY_SCHEDULE: '0',
      DATABASE_URL: databaseUrl,
    });
    const main = options.serverMain ?? fileURLToPath(new URL('../../server/dist/main.js', import.meta.url));
    const child = spawn(process.execPath, [main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    server = child;
    cleanups.push(() => stopChild(child));
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    const listening = await waitForOutput(
      child,
      () => output,
      /svc-server listening on (http:\/\/\S+)/,
      options.timeoutMs ?? 60_000,
    );

    const prism: PrismMock = await startPrism({ upstream: `${listening}/v1`, timeoutMs: options.timeoutMs });
    cleanups.push(() => prism.stop());
    gateway.setUpstream(Number(new URL(prism.baseUrl).port), Number(new URL(listening).port));

    return {
      baseUrl,
      keyFile,
      engine: options.engine,
      exchanges,
      serverOutput: () => output,
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(
      `server target (${options.engine}) did not start: ${(error as Error).message}\n${server ? output : ''}`,
    );
  }
}

interface Gateway {
  server: Server;
  port: number;
  /** Prism's port, and the server's, to which stream operations go directly. */
  setUpstream(port: number, serverPort: number): void;
}

/**
 * The paths of the spec's stream operations (a GET whose 200 answers `text/event-stream`). `prism
 * proxy` reads an upstream body whole before it answers (to validate it), so a stream that stays open
 * would never reach the suite through it: the gateway sends them to the server, and the suite checks
 * every event itself (test/support/streams.ts).
 */
function streamPaths(): RegExp[] {
  const bundle = createRequire(import.meta.url).resolve('@svc/contract/openapi.json');
  return streamOperations(JSON.parse(readFileSync(bundle, 'utf8'))).map((s) => s.path);
}

/**
 * The method and path of the spec's byte operations (an upload's body or a download's 200 is bytes,
 * `BYTE_MEDIA_TYPES` of @svc/contract). `prism proxy` re-encodes a binary body as UTF-8
 * (stoplightio/prism#1321), so bytes through it would not be the bytes sent: the gateway sends them to
 * the server directly, and the suite compares the bytes and checks the answers itself.
 */
function bytePaths(): { method: string; path: RegExp }[] {
  const bundle = createRequire(import.meta.url).resolve('@svc/contract/openapi.json');
  return byteOperations(JSON.parse(readFileSync(bundle, 'utf8'))).map(({ method, path }) => ({
    method,
    path,
  }));
}

/**
 * `/v1/<path>` → Prism's `/<path>` (a stream or byte operation's: the server's `/v1/<path>`), streamed both ways;
 * records status and `sl-violations` per exchange.
 */
async function startGateway(exchanges: ProxiedExchange[]): Promise<Gateway> {
  let upstream = 0;
  let serverPort = 0;
  const streams = streamPaths();
  const bytes = bytePaths();
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (upstream === 0 || !/^\/v1(\/|\?|$)/.test(url)) {
      res.writeHead(upstream === 0 ? 503 : 404, { 'content-type': 'text/plain' }).end('gateway: not here');
      return;
    }
    const path = url.slice(3).startsWith('/') ? url.slice(3) : `/${url.slice(3)}`;
    const bare = path.split('?')[0] ?? '';
    const direct =
      (req.method === 'GET' && streams.some((s) => s.test(bare))) ||
      bytes.some((b) => b.method === req.method && b.path.test(bare));
    const port = direct ? serverPort : upstream;
    const headers: IncomingHttpHeaders = { ...req.headers, host: `127.0.0.1:${port}` };
    const out = forward(
      { host: '127.0.0.1', port, method: req.method, path: direct ? url : path, headers },
      (answer) => {
        const status = answer.statusCode ?? 502;
        exchanges.push({
          method: req.method ?? 'GET',
          path,
          status,
          violations: parseViolations(answer.headers['sl-violations'] as string | undefined),
          ...(direct ? { direct } : {}),
        });
        res.writeHead(status, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`gateway: ${error.message}`);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('gateway has no port');
  return {
    server,
    port: address.port,
    setUpstream(port, server) {
      upstream = port;
      serverPort = server;
    },
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function waitForOutput(
  child: ChildProcess,
  output: () => string,
  pattern: RegExp,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(output());
    if (match?.[1]) return match[1];
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server did not print ${pattern} within ${timeoutMs} ms`);
}
