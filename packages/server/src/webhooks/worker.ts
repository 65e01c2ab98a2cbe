import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Database } from '../platform/db/database.js';
import type { SecretBox } from '../platform/secrets.js';
import { type AttemptResult, type OutboundOptions, postWebhook } from './outbound.js';
import {
  type ClaimedDelivery,
  claimWebhookDelivery,
  disableLongFailing,
  endpointsWithDueDeliveries,
  recordWebhookAttempt,
  renewWebhookLease,
} from './repositories/webhook-deliveries.js';
import { signedHeaders } from './signing.js';

/** How long an endpoint may stay `failing` before it is `disabled` (`failing`): 3 days. */
const FAILING_DISABLE_MS = 3 * 24 * 3600_000;

/** What the delivery worker needs. */
export interface WebhookWorkerOptions {
  db: Database;
  box: SecretBox;
  /** The clock of due times, leases and the failing window (injected in tests). */
  now: () => number;
  /** Attempts in flight at once here, shared across endpoints (`SVC_WEBHOOK_CONCURRENCY`). */
  concurrency: number;
  /** Seconds before each retry (`SVC_WEBHOOK_RETRY_SCHEDULE`). */
  retryScheduleSeconds: readonly number[];
  /** How a delivery is held (`SVC_WEBHOOK_LEASE_MS`). */
  leaseMs: number;
  /** How often due retries are looked for when nothing wakes the worker. */
  pollMs: number;
  outbound: OutboundOptions;
  /** Names this replica in `lease_owner` (default host:pid:random). */
  workerId?: string;
  /** Makes the attempt (tests); default {@link postWebhook}. */
  post?: typeof postWebhook;
  /** Told of every attempt once it is recorded: its outcome and how long it took (metrics). */
  onAttempt?: (outcome: AttemptResult['outcome'], seconds: number) => void;
  log?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Delivers queued events, on every replica. Each delivery is claimed with a lease (the endpoint's row
 * locked, `SKIP LOCKED`), so replicas never attempt one delivery at once and at most one attempt per
 * endpoint is in flight anywhere; a replica that dies mid-attempt loses the lease and another retries
 * (at least once, never lost). The slots are shared round-robin: the endpoint served longest ago goes
 * first, so one slow endpoint holds one slot and never delays the others.
 *
 * @example
 * const worker = new WebhookWorker({ db, box, now: Date.now, concurrency: 8, … });
 * worker.start();
 */
export class WebhookWorker {
  readonly #options: WebhookWorkerOptions;
  readonly #owner: string;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #served = new Map<string, number>();
  #turn = 0;
  #failingChecked = 0;
  #pumping: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;

  constructor(options: WebhookWorkerOptions) {
    this.#options = options;
    this.#owner = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /** Attempts in flight here now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  start(): void {
    this.#stopped = false;
    this.#timer = setInterval(() => this.wake(), this.#options.pollMs);
    this.#timer.unref();
    this.wake();
  }

  /** Stops claiming and waits for the attempts in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#pumping;
    await Promise.all(this.#inFlight.values());
  }

  /** Looks for due deliveries now (a queueing here, an attempt's end, the timer). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = this.#pump()
      .catch((error: unknown) => this.#options.log?.('webhook worker failed', { error: String(error) }))
      .finally(() => {
        this.#pumping = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #pump(): Promise<void> {
    const { db } = this.#options;
    const now = new Date(this.#options.now());
    // Every 10 s of the webhooks' clock is plenty for a 3-day window (and spares a statement a pump).
    if (now.getTime() - this.#failingChecked >= 10_000) {
      this.#failingChecked = now.getTime();
      await disableLongFailing(db, new Date(now.getTime() - FAILING_DISABLE_MS));
    }
    let free = this.#options.concurrency - this.#inFlight.size;
    if (free <= 0) return;
    const candidates = (await endpointsWithDueDeliveries(db, now, 200))
      .filter((id) => !this.#inFlight.has(id))
      .sort((a, b) => (this.#served.get(a) ?? 0) - (this.#served.get(b) ?? 0));
    for (const endpointId of candidates) {
      if (free <= 0 || this.#stopped) break;
      const at = new Date(this.#options.now());
      const claimed = await db.transaction((tx) =>
        claimWebhookDelivery(tx, endpointId, this.#owner, at, new Date(at.getTime() + this.#options.leaseMs)),
      );
      if (!claimed) continue;
      free--;
      this.#served.set(endpointId, ++this.#turn);
      const attempt = this.#attempt(claimed)
        .catch((error: unknown) =>
          this.#options.log?.('webhook attempt failed', { delivery_id: claimed.id, error: String(error) }),
        )
        .finally(() => {
          this.#inFlight.delete(endpointId);
          this.wake();
        });
      this.#inFlight.set(endpointId, attempt);
    }
  }

  async #attempt(claimed: ClaimedDelivery): Promise<void> {
    const { box, db } = this.#options;
    const startedAt = new Date(this.#options.now());
    const secrets = [box.open(claimed.endpoint_id, claimed.secret_sealed)];
    if (
      claimed.previous_sealed &&
      claimed.secret_expires_at &&
      claimed.secret_expires_at.getTime() > startedAt.getTime()
    )
      secrets.push(box.open(claimed.endpoint_id, claimed.previous_sealed));
    const headers: Record<string, string> = signedHeaders({
      id: claimed.event_id,
      body: claimed.payload,
      at: startedAt,
      secrets,
    });
    if (claimed.test) headers['svc-webhook-test'] = 'true';
    const began = performance.now();
    // The lease is renewed every third of it while the receiver has the request, so a slow receiver
    // (up to an attempt's 15 s) never lets another replica attempt the delivery at the same time.
    const { leaseMs } = this.#options;
    const renew = setInterval(
      () => {
        renewWebhookLease(db, claimed.id, this.#owner, new Date(this.#options.now() + leaseMs)).catch(
          () => {},
        );
      },
      Math.max(10, Math.floor(leaseMs / 3)),
    );
    let result: AttemptResult;
    try {
      result = await (this.#options.post ?? postWebhook)(
        { url: claimed.url, headers, body: claimed.payload },
        this.#options.outbound,
      );
    } finally {
      clearInterval(renew);
    }
    const durationMs = performance.now() - began;
    const delay = this.#options.retryScheduleSeconds[claimed.round_failures];
    await db.transaction((tx) =>
      recordWebhookAttempt(tx, {
        deliveryId: claimed.id,
        endpointId: claimed.endpoint_id,
        owner: this.#owner,
        startedAt,
        durationMs,
        outcome: result.outcome,
        statusCode: result.statusCode,
        error: result.error,
        now: new Date(this.#options.now()),
        retryAfterMs: delay === undefined ? undefined : delay * 1000,
      }),
    );
    this.#options.onAttempt?.(result.outcome, durationMs / 1000);
  }
}
