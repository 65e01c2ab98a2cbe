import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import { ownerPage } from '../../platform/repositories/keyset.js';

// Deliveries and attempts (migration 016): what the API reads, and the SQL of the dispatcher (fan-out
// of the event log) and of the delivery worker (claims with a lease, attempts, the retry schedule).

/** A delivery as the API renders it. */
export interface WebhookDeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  test: boolean;
  status: Schema<'WebhookDeliveryStatus'>;
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** One attempt of a delivery. */
export interface WebhookAttemptRow {
  delivery_id: string;
  started_at: Date;
  duration_ms: number;
  outcome: Schema<'WebhookAttempt'>['outcome'];
  status_code: number | null;
  error: string | null;
}

const COLUMNS =
  'id, endpoint_id, event_id, event_type, test, status, attempt_count, next_attempt_at, created_at, updated_at';

/** The endpoint's delivery by id; 404 `not_found` otherwise. */
export async function webhookDeliveryOf(
  db: Queryable,
  endpointId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<WebhookDeliveryRow> {
  const { rows } = await db.query<WebhookDeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 AND id = $2${options.lock ? ' FOR UPDATE' : ''}`,
    [endpointId, id],
  );
  if (!rows[0]) throw new ApiError('not_found', `webhook delivery ${id} not found for this endpoint`);
  return rows[0];
}

/** One page of the endpoint's deliveries, newest first, of one status when given. */
export async function listWebhookDeliveryRows(
  db: Queryable,
  endpointId: string,
  page: { after: string | null; limit: number; status?: string | undefined },
): Promise<WebhookDeliveryRow[]> {
  const keyset = ownerPage('endpoint_id', '$1');
  const { rows } = await db.query<WebhookDeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE ${keyset.where} AND ($2::text IS NULL OR id < $2)
        AND ($3::text IS NULL OR status = $3)
      ORDER BY ${keyset.order} LIMIT $4`,
    [endpointId, page.after, page.status ?? null, page.limit],
  );
  return rows;
}

/** The last 50 attempts of each delivery, newest first. */
export async function attemptsOf(
  db: Queryable,
  deliveryIds: string[],
): Promise<Map<string, WebhookAttemptRow[]>> {
  const byDelivery = new Map<string, WebhookAttemptRow[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return byDelivery;
  const { rows } = await db.query<WebhookAttemptRow>(
    `SELECT delivery_id, started_at, duration_ms, outcome, status_code, error FROM (
       SELECT a.*, row_number() OVER (PARTITION BY delivery_id ORDER BY number DESC) AS n
         FROM webhook_attempts a WHERE delivery_id = ANY($1::text[])) t
      WHERE n <= 50 ORDER BY delivery_id, n`,
    [deliveryIds],
  );
  for (const row of rows) byDelivery.get(row.delivery_id)?.push(row);
  return byDelivery;
}

/** Queues a delivery (a sample event, or one event of the log); nothing when it is queued already. */
export async function queueWebhookDelivery(
  db: Queryable,
  delivery: {
    id: string;
    endpointId: string;
    eventId: string;
    sequence: number | null;
    type: string;
    payload: string;
    test: boolean;
    due: Date;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_sequence, event_type, payload, test, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
    [
      delivery.id,
      delivery.endpointId,
      delivery.eventId,
      delivery.sequence,
      delivery.type,
      delivery.payload,
      delivery.test,
      delivery.due,
    ],
  );
}

/** Makes a finished delivery `pending` again, due at `now`, with a fresh round of retries. */
export async function redeliverWebhookDelivery(
  db: Queryable,
  id: string,
  now: Date,
): Promise<WebhookDeliveryRow> {
  const { rows } = await db.query<WebhookDeliveryRow>(
    `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2, round_failures = 0,
        lease_owner = NULL, lease_until = NULL, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, now],
  );
  return rows[0] as WebhookDeliveryRow;
}

// — The dispatcher —

/** An endpoint as the dispatcher reads it, its row locked. */
export interface FollowingEndpoint {
  id: string;
  event_types: string[];
  status: Schema<'WebhookEndpointStatus'>;
  queued_through: number;
}

/** The workspace's endpoints, locked for the transaction (one dispatcher at a time moves a cursor). */
export async function lockFollowingEndpoints(
  db: Queryable,
  workspaceId: string,
): Promise<FollowingEndpoint[]> {
  const { rows } = await db.query<FollowingEndpoint>(
    `SELECT id, event_types, status, queued_through FROM webhook_endpoints WHERE workspace_id = $1
      ORDER BY id FOR UPDATE`,
    [workspaceId],
  );
  return rows;
}

/** Moves an endpoint's cursor (the last sequence it has queued up to). */
export async function setQueuedThrough(db: Queryable, endpointId: string, sequence: number): Promise<void> {
  await db.query('UPDATE webhook_endpoints SET queued_through = $2 WHERE id = $1 AND queued_through < $2', [
    endpointId,
    sequence,
  ]);
}

/** Workspaces with an endpoint behind its log (the dispatcher's safety-net pass). */
export async function workspacesBehind(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ workspace_id: string }>(
    `SELECT DISTINCT e.workspace_id FROM webhook_endpoints e
       JOIN workspace_event_counters c ON c.workspace_id = e.workspace_id
      WHERE e.queued_through < c.last_sequence LIMIT $1`,
    [limit],
  );
  return rows.map((row) => row.workspace_id);
}

// — The delivery worker —

/**
 * Endpoints with a delivery due at `now` that nobody holds, oldest due first. A disabled endpoint's
 * deliveries wait, but for sample events (`POST …/test` works whatever the endpoint's status).
 */
export async function endpointsWithDueDeliveries(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ endpoint_id: string }>(
    `SELECT d.endpoint_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until < $1)
        AND (e.status <> 'disabled' OR d.test)
      GROUP BY d.endpoint_id ORDER BY min(d.next_attempt_at) LIMIT $2`,
    [now, limit],
  );
  return rows.map((row) => row.endpoint_id);
}

/** A claimed delivery, with what an attempt needs. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  payload: string;
  test: boolean;
  round_failures: number;
  url: string;
  secret_sealed: Uint8Array;
  previous_sealed: Uint8Array | null;
  secret_expires_at: Date | null;
}

/**
 * Claims the endpoint's next due delivery for `owner` until `leaseUntil`, unless the endpoint has one
 * in flight (at most one per endpoint, across replicas: the endpoint's row is the lock); of a
 * disabled endpoint, only a sample event. Due deliveries go by due time, then sequence: first attempts in the log's order; a retry
 * waits for its time and does not hold later events back.
 */
export async function claimWebhookDelivery(
  db: Queryable,
  endpointId: string,
  owner: string,
  now: Date,
  leaseUntil: Date,
): Promise<ClaimedDelivery | undefined> {
  const endpoint = await db.query<{
    url: string;
    secret_sealed: Uint8Array;
    previous_sealed: Uint8Array | null;
    secret_expires_at: Date | null;
    disabled: boolean;
  }>(
    `SELECT url, secret_sealed, previous_sealed, secret_expires_at, status = 'disabled' AS disabled
       FROM webhook_endpoints WHERE id = $1 FOR UPDATE SKIP LOCKED`,
    [endpointId],
  );
  const found = endpoint.rows[0];
  if (!found) return undefined;
  const { disabled, ...row } = found;
  const { rows } = await db.query<
    Omit<ClaimedDelivery, 'url' | 'secret_sealed' | 'previous_sealed' | 'secret_expires_at'>
  >(
    `UPDATE webhook_deliveries SET lease_owner = $2, lease_until = $4
      WHERE id = (
        SELECT id FROM webhook_deliveries
         WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at <= $3
           AND (lease_until IS NULL OR lease_until < $3) AND (NOT $5::boolean OR test)
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.endpoint_id = $1 AND o.status = 'pending'
                             AND o.lease_until >= $3)
         ORDER BY next_attempt_at, event_sequence NULLS FIRST, id LIMIT 1)
      RETURNING id, endpoint_id, event_id, payload, test, round_failures`,
    [endpointId, owner, now, leaseUntil, disabled],
  );
  const claimed = rows[0];
  return claimed && { ...claimed, ...row };
}

/**
 * Extends the lease `owner` holds on a delivery it is attempting to `leaseUntil`: a replica alive but
 * waiting on a slow receiver keeps its delivery, and only one that stops renewing (dead, or hung) loses
 * it. False when the claim was already lost.
 */
export async function renewWebhookLease(
  db: Queryable,
  deliveryId: string,
  owner: string,
  leaseUntil: Date,
): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE webhook_deliveries SET lease_until = $3
      WHERE id = $1 AND lease_owner = $2 AND status = 'pending' RETURNING id`,
    [deliveryId, owner, leaseUntil],
  );
  return rows.length > 0;
}

/**
 * Records an attempt of a delivery `owner` holds and ends the claim: `succeeded`; or due again after
 * `retryAfterMs`; or `failed` when the schedule is spent (`retryAfterMs` undefined), which makes an
 * `enabled` endpoint `failing`. A success makes a `failing` endpoint `enabled`. False when the claim
 * was lost (another replica took the delivery over): nothing is written.
 */
export async function recordWebhookAttempt(
  db: Queryable,
  attempt: {
    deliveryId: string;
    endpointId: string;
    owner: string;
    startedAt: Date;
    durationMs: number;
    outcome: WebhookAttemptRow['outcome'];
    statusCode: number | undefined;
    error: string | undefined;
    now: Date;
    retryAfterMs: number | undefined;
  },
): Promise<boolean> {
  const succeeded = attempt.outcome === 'succeeded';
  const next =
    succeeded || attempt.retryAfterMs === undefined
      ? null
      : new Date(attempt.now.getTime() + attempt.retryAfterMs);
  const status = succeeded ? 'succeeded' : next ? 'pending' : 'failed';
  // The endpoint's row first, as every other writer takes them (a handler: endpoint, then delivery):
  // the opposite order deadlocks with a redelivery.
  await db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [attempt.endpointId]);
  const { rows } = await db.query<{ attempt_count: number }>(
    `UPDATE webhook_deliveries SET status = $3, next_attempt_at = $4, attempt_count = attempt_count + 1,
        round_failures = CASE WHEN $3 = 'succeeded' THEN round_failures ELSE round_failures + 1 END,
        lease_owner = NULL, lease_until = NULL, updated_at = now()
      WHERE id = $1 AND lease_owner = $2 RETURNING attempt_count`,
    [attempt.deliveryId, attempt.owner, status, next],
  );
  const counted = rows[0];
  if (!counted) return false;
  await db.query(
    `INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_ms, outcome, status_code, error)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      attempt.deliveryId,
      counted.attempt_count,
      attempt.startedAt,
      Math.max(0, Math.round(attempt.durationMs)),
      attempt.outcome,
      attempt.statusCode ?? null,
      attempt.error ?? null,
    ],
  );
  if (succeeded)
    await db.query(
      `UPDATE webhook_endpoints SET status = 'enabled', failing_since = NULL, updated_at = now()
        WHERE id = $1 AND status = 'failing'`,
      [attempt.endpointId],
    );
  else if (status === 'failed')
    await db.query(
      `UPDATE webhook_endpoints SET status = 'failing', failing_since = $2, updated_at = now()
        WHERE id = $1 AND status = 'enabled'`,
      [attempt.endpointId, attempt.now],
    );
  return true;
}

/** Endpoints `failing` since before `before` become `disabled` (`failing`); how many. */
export async function disableLongFailing(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', failing_since = NULL,
        updated_at = now()
      WHERE status = 'failing' AND failing_since <= $1`,
    [before],
  );
  return rowCount;
}

/**
 * Housekeeping: deliveries (and their attempts) queued more than `hours` ago (7 days: the spec's
 * retention), and previous secrets past their overlap. How many deliveries.
 */
export async function purgeWebhookDeliveries(db: Queryable, hours: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM webhook_deliveries WHERE created_at < now() - make_interval(hours => $1)`,
    [hours],
  );
  await db.query(
    `UPDATE webhook_endpoints SET previous_sealed = NULL, secret_expires_at = NULL WHERE secret_expires_at <= now()`,
  );
  return rowCount;
}
