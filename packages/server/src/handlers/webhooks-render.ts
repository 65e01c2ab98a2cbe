import type { Schema } from '@svc/contract';
import type { WebhookAttemptRow, WebhookDeliveryRow } from '../webhooks/repositories/webhook-deliveries.js';
import type { WebhookEndpointRow } from '../webhooks/repositories/webhooks.js';

// Webhook rows → the spec's shapes. Optional fields are present exactly when the spec says: a reason
// only while `disabled`, `failing_since` only while `failing`, `secret_expires_at` only during an
// overlap, `next_attempt_at` only while `pending`; never a secret.

const time = (value: Date): string => value.toISOString();

/** @example renderWebhookEndpoint(row) // { id, workspace_id, url, event_types, status, … } */
export function renderWebhookEndpoint(row: WebhookEndpointRow): Schema<'WebhookEndpoint'> {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    url: row.url,
    ...(row.description ? { description: row.description } : {}),
    event_types: row.event_types,
    status: row.status,
    ...(row.status === 'disabled' && row.disabled_reason ? { disabled_reason: row.disabled_reason } : {}),
    ...(row.status === 'failing' && row.failing_since ? { failing_since: time(row.failing_since) } : {}),
    ...(row.secret_expires_at ? { secret_expires_at: time(row.secret_expires_at) } : {}),
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}

/** @example renderWebhookAttempt(row) // { started_at, duration_ms, outcome, … } */
function renderWebhookAttempt(row: WebhookAttemptRow): Schema<'WebhookAttempt'> {
  return {
    started_at: time(row.started_at),
    duration_ms: row.duration_ms,
    outcome: row.outcome,
    ...(row.status_code !== null ? { status_code: row.status_code } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
  };
}

/** @example renderWebhookDelivery(row, attempts) */
export function renderWebhookDelivery(
  row: WebhookDeliveryRow,
  attempts: WebhookAttemptRow[],
): Schema<'WebhookDelivery'> {
  return {
    id: row.id,
    webhook_endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    ...(row.test ? { test: true } : {}),
    status: row.status,
    attempt_count: row.attempt_count,
    ...(row.status === 'pending' && row.next_attempt_at
      ? { next_attempt_at: time(row.next_attempt_at) }
      : {}),
    attempts: attempts.map(renderWebhookAttempt),
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  };
}
