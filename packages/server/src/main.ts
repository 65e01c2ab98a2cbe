#!/usr/bin/env node
// svc-server: serves the v1 API (and /signin, /mcp) on HOST:PORT. `--sandbox`: in memory, with demo data.
// `svc-server account set …`: creates or resets a local sign-in account in the configured database.
// `svc-server hosts …`: the fleet of Docker Engines computers are placed on (an operator's command).
import { parseArgs } from 'node:util';
import type { App, ResponseValidation } from './compose/app.js';
import { createApp } from './compose/app.js';
import { bootstrap, bootstrapMessage } from './compose/bootstrap.js';
import { ACCOUNT_USAGE, runAccountCommand } from './compose/commands/account.js';
import { HOSTS_USAGE, runHostsCommand } from './compose/commands/hosts.js';
import { type Config, ConfigError, loadConfig } from './compose/config.js';
import { Metrics } from './compose/metrics.js';
import type { MetricsServer } from './compose/metrics-server.js';
import { serveMetrics } from './compose/metrics-server.js';
import { seedSandbox } from './compose/sandbox.js';
import { tuneHeapForFiles } from './computers/files/heap.js';
import { listen } from './http/node-adapter.js';
import { drainAndStop, Lifecycle, notYetServing } from './http/readiness.js';
import { createLogger } from './platform/observe/logger.js';
import { startTracing } from './platform/observe/tracing.js';

const USAGE = `Usage: svc-server [--sandbox]

Serves the API on HOST:PORT (default 127.0.0.1:8080). Database: DATABASE_URL, else PGlite under
SVC_DATA_DIR (default .svc/data). --sandbox: in memory, with demo data and simulated computers.

${ACCOUNT_USAGE}
${HOSTS_USAGE}`;

/**
 * What a person starting the server wants to know at once: which driver runs computers (and its warm
 * pool), which database holds the data, how to reach it and where its reference is. Never a secret: a database URL
 * is shown without its password.
 */
function startBanner(config: Readonly<Config>, sandbox: boolean): string {
  const driver =
    config.driver === 'docker'
      ? `docker (Engine ${config.docker.socketPath}; warm pool ${
          config.docker.pool.targets.length > 0
            ? config.docker.pool.targets.map((t) => `${t.image}:${t.size}=${t.count}`).join(',')
            : 'off'
        })`
      : 'simulated (commands are simulated too; SVC_DRIVER=docker for containers)';
  let database = sandbox ? 'PGlite in memory (sandbox)' : `PGlite in ${config.dataDir}`;
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    url.password = '';
    database = `PostgreSQL ${url.host}${url.pathname} (pool ${config.poolSize})`;
  }
  const origin = new URL(config.baseUrl).origin;
  return `  computers: ${driver}\n  database:  ${database}\n  agents:    MCP at ${origin}/mcp; people: svc login --base-url ${config.baseUrl}\n  docs:      ${origin}/docs (the API reference)\n`;
}

async function serve(sandbox: boolean): Promise<void> {
  const loaded = loadConfig(process.env, { sandbox });
  const logger = await createLogger({ level: loaded.logLevel, pretty: process.stdout.isTTY === true });
  // V8's heap as file traffic needs it (decision 0018); before any request is served.
  if (loaded.files.heapTuning) logger.debug(tuneHeapForFiles(), 'heap tuned for file traffic');
  const metrics = loaded.metrics ? new Metrics() : undefined;
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then the OpenTelemetry packages load (dynamically).
  const tracing = await startTracing({ env: process.env });
  const lifecycle = new Lifecycle();
  let app: App | undefined;
  // Bind first: with PORT=0 only the bound socket knows the port, and tokens' iss/aud and key files'
  // base_url must name the real address. Requests that arrive before the app is ready get 503, and
  // `/ready` says `starting` until migrations ran and the worker is up.
  const running = await listen(
    lifecycle.wrap((request, env) =>
      app ? app.fetch(request, env) : Promise.resolve(notYetServing(request)),
    ),
    { port: loaded.port, hostname: loaded.host, requestTimeoutMs: loaded.requestTimeoutMs },
  );
  const baseUrl = process.env.SVC_BASE_URL ? loaded.baseUrl : `${running.url}/v1`;
  const config = Object.freeze({ ...loaded, baseUrl, tokenUrl: `${baseUrl}/auth/token` });
  const validation = (process.env.SVC_VALIDATE_RESPONSES ??
    (process.env.NODE_ENV === 'development' ? 'log' : 'off')) as ResponseValidation;
  app = await createApp({ config, responseValidation: validation, observe: { logger, metrics, tracing } });

  const first = await bootstrap(app.db, {
    baseUrl,
    keyFilePath:
      sandbox && !process.env.SVC_BOOTSTRAP_KEY_FILE ? '.svc/sandbox-key.json' : config.bootstrapKeyFile,
    overwriteKeyFile: sandbox,
  });
  if (first) process.stdout.write(bootstrapMessage(first));
  if (sandbox && first) {
    const data = await seedSandbox(app.db, first.userId);
    process.stdout.write(
      `Sandbox (in memory, ${config.driver === 'docker' ? 'Docker' : 'SIMULATED'} computers): demo workspaces ${data.workspaces.join(', ')}; ` +
        `viewer ${data.viewer.email} / ${data.viewer.password}\n`,
    );
  }
  await app.start();
  lifecycle.markReady();
  let metricsServer: MetricsServer | undefined;
  if (metrics && config.metrics) {
    metricsServer = await serveMetrics(metrics, config.metrics);
    logger.info({ url: metricsServer.url }, `metrics on ${metricsServer.url}`);
  }
  if (tracing) logger.info({ endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'tracing to OTLP');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Ctrl-C at a terminal has no balancer to wait for.
    const drainDelayMs = signal === 'SIGINT' ? 0 : config.drainDelayMs;
    logger.info(
      { signal, drain_delay_ms: drainDelayMs, timeout_ms: config.shutdownTimeoutMs },
      `${signal}: draining (not ready), finishing in-flight requests and operations, then stopping`,
    );
    // Whatever happens below, the process is gone shortly after the timeout.
    setTimeout(() => {
      logger.error({ signal }, 'shutdown overran its timeout; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5000).unref();
    try {
      const current = app;
      const clean = await drainAndStop({
        lifecycle,
        drainDelayMs,
        timeoutMs: config.shutdownTimeoutMs,
        endKeepAlive: () => running.endKeepAlive(),
        endStreams: () => current?.endStreams(),
        // The lifetime check starts no operation once draining: the worker would not run it here.
        stopWorker: async (timeoutMs) => {
          await current?.lifetimes.stop();
          await current?.worker.stop({ timeoutMs });
        },
        // Ctrl-C at a terminal has no client to keep: idle keep-alive connections end at once.
        closeListener: () => (signal === 'SIGINT' ? running.close() : running.drain()),
        cutConnections: () =>
          (running.server as { closeAllConnections?: () => void }).closeAllConnections?.(),
        closeRest: async () => {
          await current?.close();
          await metricsServer?.close();
          await tracing?.shutdown().catch(() => {});
        },
      });
      if (clean) logger.info({ signal }, 'stopped');
      else logger.warn({ signal }, 'stopped; connections still open at the timeout were cut');
      logger.flush();
      process.exit(0);
    } catch (error) {
      logger.error({ signal, error: (error as Error).message }, 'shutdown failed');
      logger.flush();
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A plain line, whatever LOG_LEVEL says: scripts and tests wait for it to learn the address. Once it
  // is out a Ctrl-C may follow at once, so the signals above are heard before it is written.
  process.stdout.write(
    `svc-server listening on ${running.url} (API ${baseUrl})${sandbox ? ' [sandbox]' : ''}\n${startBanner(config, sandbox)}`,
  );
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv[0] === 'account') {
    process.exitCode = await runAccountCommand(argv.slice(1), {
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
    });
    return;
  }
  if (argv[0] === 'hosts') {
    process.exitCode = await runHostsCommand(argv.slice(1), {
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
    });
    return;
  }
  let values: { sandbox?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { sandbox: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    process.stderr.write(`svc-server: ${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  await serve(values.sandbox === true);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration: ${error.message}` : (error as Error).message;
  process.stderr.write(`svc-server could not start: ${message}\n`);
  process.exit(1);
});
