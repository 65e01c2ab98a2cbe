#!/usr/bin/env node
// svc-server: serves the v1 API (and /signin, /mcp) on HOST:PORT. `--sandbox`: in memory, with demo data.
// `svc-server account set …`: creates or resets a local sign-in account in the configured database.
import { parseArgs } from 'node:util';
import type { App, ResponseValidation } from './app.js';
import { createApp } from './app.js';
import { bootstrap, bootstrapMessage } from './bootstrap.js';
import { ACCOUNT_USAGE, runAccountCommand } from './commands/account.js';
import { ConfigError, loadConfig } from './config.js';
import { listen } from './http/node-adapter.js';
import { seedSandbox } from './sandbox.js';

/** How long in-flight requests (long-polls included) may run on after SIGTERM before sockets are cut. */
const DRAIN_MS = 10_000;

const USAGE = `Usage: svc-server [--sandbox]

Serves the API on HOST:PORT (default 127.0.0.1:8080). Database: DATABASE_URL, else PGlite under
SVC_DATA_DIR (default .svc/data). --sandbox: in memory, with demo data and simulated computers.

${ACCOUNT_USAGE}`;

async function serve(sandbox: boolean): Promise<void> {
  const loaded = loadConfig(process.env, { sandbox });
  let app: App | undefined;
  // Bind first: with PORT=0 only the bound socket knows the port, and tokens' iss/aud and key files'
  // base_url must name the real address. Requests that arrive before the app is ready get 503.
  const running = await listen(
    (request, env) =>
      app
        ? app.fetch(request, env)
        : Promise.resolve(
            Response.json({ error: 'starting' }, { status: 503, headers: { 'retry-after': '1' } }),
          ),
    { port: loaded.port, hostname: loaded.host },
  );
  const baseUrl = process.env.SVC_BASE_URL ? loaded.baseUrl : `${running.url}/v1`;
  const config = Object.freeze({ ...loaded, baseUrl, tokenUrl: `${baseUrl}/auth/token` });
  const validation = (process.env.SVC_VALIDATE_RESPONSES ??
    (process.env.NODE_ENV === 'development' ? 'log' : 'off')) as ResponseValidation;
  app = await createApp({ config, responseValidation: validation });

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
  process.stdout.write(
    `svc-server listening on ${running.url} (API ${baseUrl})${sandbox ? ' [sandbox]' : ''}\n`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: finishing in-flight requests, then stopping\n`);
    const cut = setTimeout(() => {
      const server = running.server as { closeAllConnections?: () => void };
      server.closeAllConnections?.();
    }, DRAIN_MS);
    cut.unref();
    try {
      await running.close();
      await app?.close();
      process.exit(0);
    } catch (error) {
      process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
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
