import type { OpenApiDocument } from '@svc/contract';
import { ComputerChanges, WaitSlots } from '../computers/computer-waits.js';
import type { ComputerDriver } from '../computers/driver.js';
import { OperationEvents } from '../computers/events.js';
import { WORKSPACE_EVENTS_CHANNEL } from '../computers/repositories/events.js';
import { OPERATION_OUTPUT_CHANNEL } from '../computers/repositories/operation-output.js';
import { COMPUTERS_CHANNEL, parseComputerChange, ReadCache } from '../computers/repositories/read-cache.js';
import { createDesktops } from '../desktops/desktops.js';
import type { AppDeps } from '../handlers/deps.js';
import { AccessTokens } from '../identity/auth/access-token.js';
import { serverSecretKey } from '../identity/auth/secret-key.js';
import { ServerKeys } from '../identity/auth/signing-keys.js';
import type { Database } from '../platform/db/database.js';
import type { Log } from '../platform/observe/log.js';
import { Cursors, loadCursorSecret } from '../platform/paging.js';
import { POLICY_WIRE_NAMES, RateLimiter } from '../platform/ratelimit.js';
import { type CounterStore, counterStore } from '../platform/ratelimit-store.js';
import { Streams } from '../streams/registry.js';
import { Wakeups } from '../streams/wakeups.js';
import { Terminals } from '../terminals/manager.js';
import type { postWebhook, Resolve } from '../webhooks/outbound.js';
import type { Config } from './config.js';
import type { Metrics } from './metrics.js';
import { createWebhooks, type Webhooks } from './webhooks.js';

/**
 * What handlers share (`AppDeps`), and the counters the sign-in throttle shares with the rate limits.
 * Signing keys are sealed at rest under a key from outside the database (`SVC_SECRET_KEY`, else the
 * key file beside the data directory); a database that dies with the process (PGlite in memory)
 * needs neither.
 *
 * @example
 * const { deps, counters } = await createDeps({ config, db, document: loadDocument(), clock: Date.now });
 */
export async function createDeps(options: {
  config: Readonly<Config>;
  db: Database;
  document: OpenApiDocument;
  clock: () => number;
  /** The clock of computer lifetimes (default `clock`). */
  lifetimeClock?: (() => number) | undefined;
  /** Runs computers (the worker's actions and `exec`). */
  driver: ComputerDriver;
  /** Where `exec` writes its audit line. */
  audit: AppDeps['audit'];
  /** Counts rate-limit refusals and webhook attempts when metrics are on. */
  metrics?: Metrics | undefined;
  /** The webhooks' clock (default `clock`), resolver (default the system's) and attempts (tests inject them). */
  webhooks?:
    | {
        now?: (() => number) | undefined;
        resolve?: Resolve | undefined;
        post?: typeof postWebhook | undefined;
      }
    | undefined;
  /** Where the webhooks' worker and dispatcher report problems. */
  log: Log;
}): Promise<{ deps: AppDeps; counters: CounterStore; webhooks: Webhooks; unlisten: () => Promise<void> }> {
  const { config, db } = options;
  // One secret key seals the signing keys and (through derived keys) the webhook endpoints' secrets
  // and the fleet's Engine client keys.
  const secretKey = serverSecretKey(config);
  const serverKeys = new ServerKeys(db, secretKey);
  // Created (or loaded) now: exchanging a token inside a transaction must not need the database for it.
  await serverKeys.signingKey();
  const tokens = new AccessTokens(serverKeys, { baseUrl: config.baseUrl, now: options.clock });
  // Counters every replica shares (PostgreSQL), or in memory on PGlite: rate limits and sign-in throttles.
  const counters = counterStore(db);
  // Computers' rows cached per replica, dropped by the database's notifications of what changed.
  const reads = new ReadCache(() => db.notificationBarrier(), {
    now: options.clock,
    enabled: config.readCache,
  });
  // The same notifications wake the waits on a computer's state (`?wait_for=`), cache or no cache:
  // the cache is dropped first, so a woken wait reads the change.
  const computerChanges = new ComputerChanges();
  const unlisten = await db.listen(
    COMPUTERS_CHANNEL,
    (payload) => {
      const { workspaceId, computerId } = parseComputerChange(payload);
      reads.invalidate(workspaceId, computerId);
      computerChanges.notify(workspaceId);
    },
    {
      onGap: () => {
        reads.clear();
        computerChanges.wakeAll();
      },
    },
  );
  // Open event streams wake on their log's notifications (and poll, should one be lost).
  const workspaceEvents = new Wakeups();
  const operationOutput = new Wakeups();
  const unlistenEvents = await workspaceEvents.listen(db, WORKSPACE_EVENTS_CHANNEL);
  const unlistenOutput = await operationOutput.listen(db, OPERATION_OUTPUT_CHANNEL);
  // The PTYs this replica holds; stopping it ends them (`server_stopped`).
  const terminals = new Terminals({
    db,
    config: config.terminals,
    driver: options.driver.terminals,
    audit: options.audit,
    now: options.clock,
  });
  await terminals.start();
  const webhooks = createWebhooks({
    db,
    config,
    secretKey,
    now: options.webhooks?.now ?? options.clock,
    resolve: options.webhooks?.resolve,
    post: options.webhooks?.post,
    metrics: options.metrics,
    log: options.log,
  });
  const deps: AppDeps = {
    db,
    config,
    tokens,
    serverKeys,
    limiter: config.rateLimits
      ? new RateLimiter(config.rateLimits, counters, (policy) =>
          options.metrics?.rateLimitRefused(POLICY_WIRE_NAMES[policy]),
        )
      : undefined,
    events: new OperationEvents(),
    computerChanges,
    computerWaits: new WaitSlots(config.computerWaitsPerPrincipal),
    streams: new Streams({
      perPrincipal: config.streamsPerPrincipal,
      keepaliveMs: config.streamKeepaliveMs,
      now: options.clock,
    }),
    workspaceEvents,
    operationOutput,
    driver: options.driver,
    terminals,
    desktops: createDesktops(options.driver),
    audit: options.audit,
    cursors: new Cursors(await loadCursorSecret(db)),
    reads,
    version: options.document.info.version,
    lifetimeNow: options.lifetimeClock ?? options.clock,
    webhooks: webhooks.services,
  };
  const unlistenAll = async () => {
    await terminals.stop();
    await Promise.all([unlisten(), unlistenEvents(), unlistenOutput()]);
  };
  return { deps, counters, webhooks, unlisten: unlistenAll };
}
