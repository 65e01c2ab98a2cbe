import { purgeDeletedComputers } from '../computers/repositories/computers.js';
import { purgeWorkspaceEvents } from '../computers/repositories/events.js';
import { purgeOperationOutput } from '../computers/repositories/operation-output.js';
import { purgeExpiredJtis } from '../identity/repositories/assertion-jtis.js';
import type { Database } from '../platform/db/database.js';
import { purgeExpiredIdempotencyKeys } from '../platform/idempotency.js';
import { purgeWebhookDeliveries } from '../webhooks/repositories/webhook-deliveries.js';

/** What one housekeeping pass removed. */
export interface HousekeepingReport {
  jtis: number;
  idempotencyKeys: number;
  computers: number;
  /** Workspace events past their retention. */
  events: number;
  /** Output events of commands that ended longer ago than the output log's retention. */
  output: number;
  /** Webhook deliveries (with their attempts) older than 7 days. */
  webhookDeliveries: number;
}

/** How long the logs keep what they hold (`SVC_EVENT_RETENTION_HOURS`, `SVC_OUTPUT_RETENTION_HOURS`). */
export interface HousekeepingOptions {
  /** A workspace's events (default 168 hours: 7 days). */
  eventHours: number;
  /** A command's output, after its operation ended (default 24 hours). */
  outputHours: number;
}

const DEFAULT_RETENTION: HousekeepingOptions = { eventHours: 7 * 24, outputHours: 24 };

/**
 * Deletes what has outlived its purpose: assertion jtis past their expiry, idempotency records older
 * than 24 h, computers deleted more than 7 days ago (their operations stay), workspace events and
 * commands' output past their retention, webhook deliveries older than 7 days and previous webhook
 * secrets past their overlap. Safe to run on every replica at once; the server runs it
 * every few minutes.
 *
 * @example
 * const report = await housekeeping(db); // { jtis: 3, idempotencyKeys: 0, computers: 1, events: 0, output: 0 }
 */
export async function housekeeping(
  db: Database,
  retention: HousekeepingOptions = DEFAULT_RETENTION,
): Promise<HousekeepingReport> {
  const jtis = await purgeExpiredJtis(db);
  const idempotencyKeys = await purgeExpiredIdempotencyKeys(db);
  const computers = await purgeDeletedComputers(db);
  const events = await purgeWorkspaceEvents(db, retention.eventHours);
  const output = await purgeOperationOutput(db, retention.outputHours);
  // Deliveries are kept 7 days (the spec's word), whatever the event log's retention.
  const webhookDeliveries = await purgeWebhookDeliveries(db, 7 * 24);
  return { jtis, idempotencyKeys, computers, events, output, webhookDeliveries };
}
