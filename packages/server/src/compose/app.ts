import { loadDocument } from '@svc/contract';
import type { ComputerDriver } from '../computers/driver.js';
import { LifetimeCheck } from '../computers/lifetime-check.js';
import { SimulatedDriver } from '../computers/simulated-driver.js';
import { OperationWorker } from '../computers/worker.js';
import type { AppDeps } from '../handlers/deps.js';
import { type FetchHandler, fetchHandler } from '../http/context.js';
import { compileRouter } from '../http/router.js';
import { compileValidator } from '../http/validation.js';
import type { Database } from '../platform/db/database.js';
import type { Log } from '../platform/observe/log.js';
import { createLoggerSync, parseLogLevel } from '../platform/observe/logger.js';
import type { WebhookDispatcher } from '../webhooks/dispatcher.js';
import type { postWebhook, Resolve } from '../webhooks/outbound.js';
import type { WebhookWorker } from '../webhooks/worker.js';
import { createApi, type ResponseValidation } from './api.js';
import { authentication } from './authentication.js';
import type { Config } from './config.js';
import { openServerDatabase } from './database.js';
import { createDeps } from './deps.js';
import { dispatcher } from './dispatch.js';
import { openDockerDriver } from './docker.js';
import { createFront } from './front.js';
import { lifecycle } from './lifecycle.js';
import { rateLimiting } from './rate-limits.js';
import { type Observability, observeRequests } from './requests.js';

export type { ResponseValidation } from './api.js';

export interface AppOptions {
  config: Readonly<Config>;
  /** An open, migrated database; by default the configured one is opened (and closed by `close`). */
  db?: Database;
  /** Runs computers; by default the one `config.driver` names (the simulated driver unless `docker`). */
  driver?: ComputerDriver;
  /** Milliseconds since the epoch; injectable for tests (tokens). Rate limits count in real time. */
  clock?: () => number;
  /** The clock of computer lifetimes (expiries, idle timeouts, activity); default `clock`. */
  lifetimeClock?: () => number;
  responseValidation?: ResponseValidation;
  /** How often housekeeping runs (default 5 minutes). */
  housekeepingMs?: number;
  /** Where problems are reported (500s, response violations, housekeeping failures). Default: the logger. */
  log?: Log;
  /**
   * The logger, metrics and tracing (src/observe/). Default: a logger on stdout at the process's
   * `LOG_LEVEL` (tests run with `silent`), no metrics, no tracing.
   */
  observe?: Observability;
  /**
   * Webhooks under test: their clock (due times, leases, the failing window; default `clock`), the
   * resolver of receivers' host names, and how an attempt is made.
   */
  webhooks?: { now?: () => number; resolve?: Resolve; post?: typeof postWebhook };
}

/** The server as a value: its web-standard `fetch`, and the parts tests and `main` reach for. */
export interface App {
  /** Everything the service answers: `/v1/**` (the API), `/signin/**` and `/mcp`. */
  fetch: FetchHandler;
  db: Database;
  deps: AppDeps;
  worker: OperationWorker;
  /** Ends computers whose lifetime is over; tests call `checkOnce()`. */
  lifetimes: LifetimeCheck;
  /** The webhooks' dispatcher (event log → deliveries) and delivery worker of this replica. */
  webhooks: { dispatcher: WebhookDispatcher; worker: WebhookWorker };
  /** Starts the operation worker, the lifetime check, the webhooks and housekeeping. */
  start(): Promise<void>;
  /**
   * The drain's first step for event streams: every open one ends now (`stream.ended`,
   * `shutting_down`), and one asked for from now on is `503`; `close` does it too.
   */
  endStreams(): void;
  /** Stops them and closes the database if the app opened it. */
  close(): Promise<void>;
}

/**
 * The composition root: wires the parts built in `compose/` — routing and validation from the bundled
 * spec, rate limits (`rate-limits.ts`), authentication (`authentication.ts`), dispatch to the handlers
 * with idempotency (`dispatch.ts`), the `/v1` core (`api.ts`), sign-in, OAuth and MCP beside it
 * (`front.ts`), and the worker and housekeeping (`lifecycle.ts`).
 *
 * @example
 * const app = await createApp({ config: loadConfig({ PORT: '0' }, { sandbox: true }) });
 * await app.start();
 * const response = await app.fetch(new Request('http://127.0.0.1/v1/health'));
 * await app.close();
 */
export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const clock = options.clock ?? Date.now;
  const observe = options.observe ?? {
    logger: createLoggerSync({ level: parseLogLevel(process.env.LOG_LEVEL) }),
  };
  const log: Log = options.log ?? ((message, fields) => observe.logger.error(fields, message));
  const opened = options.db ?? (await openServerDatabase(config));
  // With tracing on, every query made while serving a request gets a span (src/observe/tracing.ts).
  const db = observe.tracing ? observe.tracing.database(opened) : opened;
  const document = loadDocument();
  // SVC_DRIVER=docker: containers, kept true to the Engine by a reconciler (operations/docker/).
  const docker =
    !options.driver && config.driver === 'docker'
      ? await openDockerDriver(config, db.background(), log)
      : undefined;
  const driver =
    options.driver ??
    docker ??
    new SimulatedDriver({
      stepMs: config.simStepMs,
      fleet: config.simFleet,
      filesQuotaBytes: config.files.quotaBytes,
      filesMaxArchiveEntries: config.files.maxEntries,
    });
  const { metrics } = observe;
  // Audit lines (who ran which command) belong to the request log at info, not with the problems.
  const audit: AppDeps['audit'] = options.log ?? ((message, fields) => observe.logger.info(fields, message));
  const { deps, counters, webhooks, unlisten } = await createDeps({
    config,
    db,
    document,
    clock,
    lifetimeClock: options.lifetimeClock,
    driver,
    audit,
    metrics,
    webhooks: options.webhooks,
    log,
  });
  const lifetimes = new LifetimeCheck({
    db: db.background(),
    now: deps.lifetimeNow,
    intervalMs: config.lifetimeCheckMs,
    log,
  });
  const worker = new OperationWorker({
    db: db.background(),
    driver,
    events: deps.events,
    leaseMs: config.operationLeaseMs,
    concurrency: config.operationConcurrency,
    now: deps.lifetimeNow,
  });
  metrics?.watchDatabase(opened);
  metrics?.watchOperations(opened, worker);
  metrics?.watchStreams(deps.streams);
  if (docker) metrics?.watchFleet(opened, config.fleet.unhealthyAfterMs);
  const validator = compileValidator(document, config.bodyLimitBytes, {
    maxByteBodyBytes: config.files.maxBytes,
  });
  const limits = rateLimiting(deps.limiter, deps.tokens);
  const auth = await authentication({ db, tokens: deps.tokens, document, clock, log });
  // Open streams re-check their caller as every request is checked: the same cache, the same refusals.
  deps.streams.bind({ authenticate: auth.authenticateRequest, log });
  const api = createApi({
    document,
    router: compileRouter(document),
    validator,
    onRequest: limits.onRequest,
    authenticate: auth.authenticateRoute,
    handle: dispatcher({ deps, validator, principals: auth.principals }),
    log,
    validation: options.responseValidation ?? 'off',
    rateLimited: deps.limiter !== undefined,
  });
  const front = await createFront({
    config,
    db,
    tokens: deps.tokens,
    counters,
    document,
    api,
    admit: limits.onRequest,
    authenticate: auth.authenticateRequest,
  });
  const { start, close } = lifecycle({
    db,
    worker,
    lifetimes,
    ownsDb: !options.db,
    log,
    housekeepingMs: options.housekeepingMs,
    retention: { eventHours: config.eventRetentionHours, outputHours: config.outputRetentionHours },
    // The reconciler, and the warm pool beside it (design §4.3): both follow the Engine for this replica.
    reconciler: docker && {
      start: () => docker.start(),
      stop: () => docker.stop(),
    },
    webhooks: {
      start: async () => {
        await webhooks.dispatcher.start();
        webhooks.worker.start();
      },
      stop: async () => {
        await webhooks.dispatcher.stop();
        await webhooks.worker.stop();
      },
    },
    beforeClose: async () => {
      deps.streams.end();
      await auth.unlisten();
      await unlisten();
    },
  });
  // One context per request, made here: the request log around everything reads what the steps set.
  return {
    fetch: fetchHandler(observeRequests(front, observe)),
    db,
    deps,
    worker,
    lifetimes,
    webhooks: { dispatcher: webhooks.dispatcher, worker: webhooks.worker },
    start,
    endStreams: () => deps.streams.end(),
    close,
  };
}
