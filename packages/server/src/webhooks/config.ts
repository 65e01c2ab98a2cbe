// The webhooks' section of the configuration (design "Webhooks"): the delivery worker's pace and
// retries, loopback receivers, and the quota of endpoints (design §11).
import { ConfigError, type Env, flag, int, quotas } from '../platform/config.js';

/** Outbound webhooks (design "Webhooks"). */
export interface WebhookConfig {
  /** `SVC_WEBHOOK_CONCURRENCY` (default 8): attempts in flight at once on this replica, shared across endpoints. */
  concurrency: number;
  /**
   * `SVC_WEBHOOK_RETRY_SCHEDULE`: seconds after each failed attempt before the next, comma-separated
   * (default Standard Webhooks' 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); past the last the delivery fails.
   */
  retryScheduleSeconds: readonly number[];
  /** `SVC_WEBHOOKS_ALLOW_LOOPBACK` (`true`; default off): loopback receivers, for development and tests only. */
  allowLoopback: boolean;
  /** `SVC_WEBHOOK_POLL_MS` (default 1 s): how often the worker looks for due retries when nothing wakes it. */
  pollMs: number;
  /**
   * `SVC_WEBHOOK_LEASE_MS` (default 30 s): how long a replica holds a delivery it attempts without
   * renewing it (it renews every third while the receiver has the request); a replica that dies
   * mid-attempt loses it then, and another replica tries again.
   */
  leaseMs: number;
}

/** The quota of webhooks (design §11). */
export interface WebhookQuotas {
  webhookEndpointsPerWorkspace: number;
}

/** The webhooks' section of the configuration. */
export interface WebhooksSection {
  webhooks: Readonly<WebhookConfig>;
  quotas: WebhookQuotas;
}

/**
 * The webhooks' settings from `env`.
 *
 * @example
 * webhooksSection({ SVC_WEBHOOK_CONCURRENCY: '2' }).webhooks.concurrency; // 2
 */
export function webhooksSection(env: Env): WebhooksSection {
  return {
    webhooks: Object.freeze({
      concurrency: int(env, 'SVC_WEBHOOK_CONCURRENCY', 8, 1, 256),
      retryScheduleSeconds: parseRetrySchedule(env.SVC_WEBHOOK_RETRY_SCHEDULE),
      allowLoopback: flag(env, 'SVC_WEBHOOKS_ALLOW_LOOPBACK'),
      pollMs: int(env, 'SVC_WEBHOOK_POLL_MS', 1000, 10, 600_000),
      leaseMs: int(env, 'SVC_WEBHOOK_LEASE_MS', 30_000, 100, 3_600_000),
    }),
    quotas: quotas(env, {
      webhookEndpointsPerWorkspace: ['SVC_QUOTA_WEBHOOK_ENDPOINTS_PER_WORKSPACE', 16],
    }),
  };
}

/** Standard Webhooks' recommended schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (about 27.5 h). */
const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

function parseRetrySchedule(text: string | undefined): readonly number[] {
  if (!text) return Object.freeze([...DEFAULT_WEBHOOK_RETRY_SCHEDULE]);
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > 20 || parts.some((part) => !/^\d{1,6}$/.test(part)))
    throw new ConfigError(
      `SVC_WEBHOOK_RETRY_SCHEDULE: expected up to 20 comma-separated whole seconds, got ${JSON.stringify(text)}`,
    );
  return Object.freeze(parts.map(Number));
}
