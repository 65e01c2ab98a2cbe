import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import { ownerPage } from '../../platform/repositories/keyset.js';

// Webhook endpoints as the API shows and changes them (migration 016). The dispatcher's and the
// delivery worker's SQL is in webhook-deliveries.ts.

/** A `webhook_endpoints` row as the API renders it (never its sealed secrets). */
export interface WebhookEndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  event_types: string[];
  status: Schema<'WebhookEndpointStatus'>;
  disabled_reason: 'requested' | 'failing' | null;
  failing_since: Date | null;
  /** Only while the previous secret still signs (an expired one is not shown). */
  secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, workspace_id, url, description, event_types, status, disabled_reason, failing_since,
  CASE WHEN secret_expires_at > now() THEN secret_expires_at END AS secret_expires_at, created_at, updated_at`;

/** The workspace's endpoint by id; 404 `not_found` otherwise. `lock` takes its row for the transaction. */
export async function webhookEndpointOf(
  db: Queryable,
  workspaceId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2${options.lock ? ' FOR UPDATE' : ''}`,
    [workspaceId, id],
  );
  if (!rows[0]) throw new ApiError('not_found', `webhook endpoint ${id} not found in this workspace`);
  return rows[0];
}

/** One page of the workspace's endpoints, newest first. */
export async function listWebhookEndpointRows(
  db: Queryable,
  workspaceId: string,
  page: { after: string | null; limit: number },
): Promise<WebhookEndpointRow[]> {
  const keyset = ownerPage('workspace_id', '$1');
  const { rows } = await db.query<WebhookEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE ${keyset.where} AND ($2::text IS NULL OR id < $2)
      ORDER BY ${keyset.order} LIMIT $3`,
    [workspaceId, page.after, page.limit],
  );
  return rows;
}

/** How many endpoints the workspace has (the quota). */
export async function countWebhookEndpoints(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_endpoints WHERE workspace_id = $1',
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
}

/**
 * A new endpoint, following the workspace's log from its last event now: it receives the events
 * after its creation.
 */
export async function insertWebhookEndpoint(
  db: Queryable,
  endpoint: {
    id: string;
    workspaceId: string;
    url: string;
    description: string | null;
    eventTypes: string[];
    sealed: Uint8Array;
  },
): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `INSERT INTO webhook_endpoints (id, workspace_id, url, description, event_types, secret_sealed, queued_through)
     VALUES ($1, $2, $3, $4, $5, $6,
       coalesce((SELECT last_sequence FROM workspace_event_counters WHERE workspace_id = $2), 0))
     RETURNING ${COLUMNS}`,
    [
      endpoint.id,
      endpoint.workspaceId,
      endpoint.url,
      endpoint.description,
      endpoint.eventTypes,
      endpoint.sealed,
    ],
  );
  return rows[0] as WebhookEndpointRow;
}

/** Changes what a PATCH gives; `description` `""` clears it. */
export async function updateWebhookEndpoint(
  db: Queryable,
  id: string,
  change: { url?: string | undefined; eventTypes?: string[] | undefined; description?: string | undefined },
): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET url = coalesce($2, url), event_types = coalesce($3, event_types),
        description = CASE WHEN $4::text IS NULL THEN description ELSE nullif($4, '') END, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, change.url ?? null, change.eventTypes ?? null, change.description ?? null],
  );
  return rows[0] as WebhookEndpointRow;
}

/** Deletes an endpoint with its deliveries and attempts. */
export async function deleteWebhookEndpoint(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
}

/** `disabled` (`requested`) unless it already is disabled. */
export async function disableWebhookEndpoint(db: Queryable, id: string): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'requested', failing_since = NULL,
        updated_at = now()
      WHERE id = $1 AND status <> 'disabled' RETURNING ${COLUMNS}`,
    [id],
  );
  return rows[0] ?? (await rowById(db, id));
}

/**
 * `enabled` again: its pending deliveries are due at `now`, and a disabled one's cursor jumps to the
 * log's end (events while it was disabled are not queued). An enabled endpoint is left as it is.
 */
export async function enableWebhookEndpoint(
  db: Queryable,
  id: string,
  now: Date,
): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints e SET status = 'enabled', disabled_reason = NULL, failing_since = NULL,
        queued_through = CASE WHEN e.status = 'disabled'
          THEN coalesce((SELECT last_sequence FROM workspace_event_counters c WHERE c.workspace_id = e.workspace_id), 0)
          ELSE e.queued_through END,
        updated_at = now()
      WHERE id = $1 AND status <> 'enabled' RETURNING ${COLUMNS}`,
    [id],
  );
  if (!rows[0]) return rowById(db, id);
  await db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = $2, updated_at = now()
      WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at > $2`,
    [id, now],
  );
  return rows[0];
}

/**
 * A new sealed secret; the current one signs beside it until `previousUntil` (none when `null`: an
 * overlap of 0). A previous secret from an earlier rotation is dropped at once.
 */
export async function rotateWebhookEndpoint(
  db: Queryable,
  id: string,
  sealed: { secret: Uint8Array; previous: Uint8Array | null; previousUntil: Date | null },
): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET secret_sealed = $2, previous_sealed = $3, secret_expires_at = $4, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, sealed.secret, sealed.previous, sealed.previousUntil],
  );
  return rows[0] as WebhookEndpointRow;
}

/** The endpoint's sealed current secret. */
export async function sealedSecretOf(db: Queryable, id: string): Promise<Uint8Array> {
  const { rows } = await db.query<{ secret_sealed: Uint8Array }>(
    'SELECT secret_sealed FROM webhook_endpoints WHERE id = $1',
    [id],
  );
  if (!rows[0]) throw new ApiError('not_found', `webhook endpoint ${id} not found`);
  return rows[0].secret_sealed;
}

async function rowById(db: Queryable, id: string): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1`,
    [id],
  );
  if (!rows[0]) throw new ApiError('not_found', `webhook endpoint ${id} not found`);
  return rows[0];
}
