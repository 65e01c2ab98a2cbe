import type { WebhookServices } from '../handlers/deps.js';
import type { Database } from '../platform/db/database.js';
import type { Log } from '../platform/observe/log.js';
import { SecretBox } from '../platform/secrets.js';
import type { WebhooksSection } from '../webhooks/config.js';
import { WebhookDispatcher } from '../webhooks/dispatcher.js';
import { type postWebhook, type Resolve, systemResolve } from '../webhooks/outbound.js';
import { WebhookWorker } from '../webhooks/worker.js';
import type { Metrics } from './metrics.js';

/** This replica's webhooks: what their handlers reach, the delivery worker, and the dispatcher. */
export interface Webhooks {
  /** Sealing endpoint secrets, the URL checks, their clock, and waking the worker below. */
  services: WebhookServices;
  /** Attempts deliveries: on a wake-up, and to retry. */
  worker: WebhookWorker;
  /** Fans the event log out to endpoints' deliveries, and wakes the worker. */
  dispatcher: WebhookDispatcher;
}

/**
 * Builds the webhooks of this replica at once, so the handlers' `wake` is the worker's from the start
 * (nothing is bound later). Endpoint secrets are sealed under keys derived from `secretKey`.
 *
 * @example
 * const { services, worker, dispatcher } = createWebhooks({ db, config, secretKey, now: Date.now, log });
 */
export function createWebhooks(options: {
  db: Database;
  config: WebhooksSection;
  secretKey: Uint8Array;
  /** The webhooks' clock: due times, leases, the failing window. */
  now: () => number;
  /** Resolves receivers' host names (default the system's; tests inject one). */
  resolve?: Resolve | undefined;
  /** How an attempt is made (tests); default `postWebhook`. */
  post?: typeof postWebhook | undefined;
  /** Counts attempts when metrics are on. */
  metrics?: Metrics | undefined;
  log: Log;
}): Webhooks {
  const { db, config, now, metrics, log } = options;
  const box = new SecretBox(options.secretKey);
  const outbound = {
    resolve: options.resolve ?? systemResolve,
    allowLoopback: config.webhooks.allowLoopback,
  };
  const worker = new WebhookWorker({
    db: db.background(),
    box,
    now,
    concurrency: config.webhooks.concurrency,
    retryScheduleSeconds: config.webhooks.retryScheduleSeconds,
    leaseMs: config.webhooks.leaseMs,
    pollMs: config.webhooks.pollMs,
    outbound,
    post: options.post,
    ...(metrics
      ? { onAttempt: (outcome: string, seconds: number) => metrics.webhookAttempted(outcome, seconds) }
      : {}),
    log,
  });
  metrics?.watchWebhooks(worker);
  const wake = () => worker.wake();
  const dispatcher = new WebhookDispatcher({ db: db.background(), now, onQueued: wake, log });
  return { services: { box, outbound, now, wake }, worker, dispatcher };
}
