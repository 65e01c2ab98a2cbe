import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type OperationQueue, operationQueue } from '../computers/repositories/operations.js';
import { type HostStatus, hostCapacity, hostStatuses } from '../fleet/repositories/hosts.js';
import type { Database } from '../platform/db/database.js';
import { RESOURCES } from '../platform/resources.js';

/** Latency buckets in seconds: a cached read takes ~1 ms, a long-poll up to 60 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the operation worker of this replica reports: operations it is running now. */
export interface WorkerGauge {
  readonly inFlight: number;
}

/**
 * The server's Prometheus metrics, on a registry of its own (several apps in one test process do not
 * share counters). Names and meanings are listed in docs/runbook.md; labels are bounded: `operation`
 * is an operationId of the spec or one of `signin`, `oauth`, `mcp`, `unrouted`, and `status` an HTTP
 * status code.
 *
 * @example
 * const metrics = new Metrics();
 * metrics.observeRequest('getMe', 200, 0.004);
 * const text = await metrics.registry.metrics();
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'operation' | 'status'>;
  private readonly latency: Histogram<'operation' | 'status'>;
  private readonly refusals: Counter<'policy'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly webhookLatency: Histogram<'outcome'>;

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests answered, by operationId (or area outside /v1) and status',
      labelNames: ['operation', 'status'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time from receiving a request to its response, by operationId and status',
      labelNames: ['operation', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.refusals = new Counter({
      name: 'svc_rate_limit_refusals_total',
      help: 'Requests refused with 429 rate_limited, by policy (design §11)',
      labelNames: ['policy'],
      registers: [this.registry],
    });
    this.webhookAttempts = new Counter({
      name: 'svc_webhook_attempts_total',
      help: "Webhook delivery attempts this replica made, by outcome (the spec's WebhookAttempt.outcome; design §16)",
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.webhookLatency = new Histogram({
      name: 'svc_webhook_attempt_duration_seconds',
      help: "Time of one webhook delivery attempt, from the request to the receiver's answer (or its end), by outcome",
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
  }

  /** Counts one webhook delivery attempt and its time. */
  webhookAttempted(outcome: string, seconds: number): void {
    this.webhookAttempts.inc({ outcome });
    this.webhookLatency.observe({ outcome }, seconds);
  }

  /** Webhook attempts in flight on this replica, read at scrape time (at most `SVC_WEBHOOK_CONCURRENCY`). */
  watchWebhooks(worker: { readonly inFlight: number }): void {
    new Gauge({
      name: 'svc_webhook_attempts_in_flight',
      help: 'Webhook delivery attempts this replica is making now',
      registers: [this.registry],
      collect() {
        this.set(worker.inFlight);
      },
    });
  }

  /** Counts one answered request. */
  observeRequest(operation: string, status: number, seconds: number): void {
    const labels = { operation, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  /** Counts one request refused by a rate-limit policy. */
  rateLimitRefused(policy: string): void {
    this.refusals.inc({ policy });
  }

  /**
   * Connection-pool gauges, read at scrape time. Only PostgreSQL has a pool; on PGlite (one embedded
   * connection) the gauges are not registered.
   */
  watchDatabase(db: Database): void {
    const stats = db.poolStats?.bind(db);
    if (!stats) return;
    new Gauge({
      name: 'svc_db_pool_connections',
      help: 'PostgreSQL pool connections of this replica: state=in_use|idle, and max (the pool size)',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const now = stats();
        this.set({ state: 'in_use' }, now.total - now.idle);
        this.set({ state: 'idle' }, now.idle);
        this.set({ state: 'max' }, now.max);
      },
    });
    new Gauge({
      name: 'svc_db_pool_waiting_requests',
      help: 'Queries of this replica waiting for a free pool connection',
      registers: [this.registry],
      collect() {
        this.set(stats().waiting);
      },
    });
  }

  /**
   * The event streams this replica holds open (`GET …/output`, `GET …/events`), read at scrape time:
   * each is an open socket; a replica's share is bounded per principal (`SVC_STREAMS_PER_PRINCIPAL`).
   */
  watchStreams(streams: { readonly size: number }): void {
    new Gauge({
      name: 'svc_streams_open',
      help: 'Event streams (Server-Sent Events) this replica holds open',
      registers: [this.registry],
      collect() {
        this.set(streams.size);
      },
    });
  }

  /**
   * Operation queue gauges. Depth and lag are read from the database at scrape time, so every replica
   * reports the same shared queue; in-flight counts this replica's worker only.
   */
  watchOperations(db: Database, worker: WorkerGauge): void {
    // The gauges of one scrape are collected concurrently: they share one query while it runs.
    let running: Promise<OperationQueue | undefined> | undefined;
    const queue = () => {
      running ??= readQueue(db).finally(() => {
        running = undefined;
      });
      return running;
    };
    new Gauge({
      name: 'svc_operations',
      help: 'Unfinished operations of the whole service: state=pending|running|stalled (lease expired)',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        const row = await queue();
        if (!row) return; // the database did not answer: keep the last values, the scrape still works
        this.set({ state: 'pending' }, row.pending);
        this.set({ state: 'running' }, row.running);
        this.set({ state: 'stalled' }, row.stalled);
      },
    });
    new Gauge({
      name: 'svc_operation_queue_lag_seconds',
      help: 'Age of the oldest pending operation (0 when none waits): how far the workers are behind',
      registers: [this.registry],
      async collect() {
        const row = await queue();
        if (row) this.set(row.lag);
      },
    });
    new Gauge({
      name: 'svc_worker_operations_in_flight',
      help: "Operations this replica's worker is running now",
      registers: [this.registry],
      collect() {
        this.set(worker.inFlight);
      },
    });
  }

  /**
   * The fleet's gauges (design §4.4), read from the database at scrape time, so every replica reports
   * the same hosts: how many are in each state, and each host's used share of each resource (labels:
   * the operator's host names, as many as the fleet has).
   */
  watchFleet(db: Database, unhealthyAfterMs: number): void {
    let running: Promise<HostStatus[] | undefined> | undefined;
    const read = () => {
      running ??= hostStatuses(db, unhealthyAfterMs)
        .catch(() => undefined)
        .finally(() => {
          running = undefined;
        });
      return running;
    };
    new Gauge({
      name: 'svc_fleet_hosts',
      help: 'Hosts of the fleet by state: healthy, unhealthy (no heartbeat), cordoned',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        const hosts = await read();
        if (!hosts) return;
        for (const state of ['healthy', 'unhealthy', 'cordoned'] as const)
          this.set({ state }, hosts.filter((host) => host.state === state).length);
      },
    });
    new Gauge({
      name: 'svc_fleet_host_used_ratio',
      help: "A host's used share of a resource (vcpus, memory_mib, computers): what its computers hold over its capacity",
      labelNames: ['host', 'resource'],
      registers: [this.registry],
      async collect() {
        const hosts = await read();
        if (!hosts) return;
        this.reset();
        for (const host of hosts) {
          const capacity = hostCapacity(host);
          for (const resource of RESOURCES)
            this.set(
              { host: host.name, resource },
              capacity[resource] > 0 ? host.used[resource] / capacity[resource] : 1,
            );
        }
      },
    });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** The operation queue, or `undefined` when the database does not answer (the scrape still works). */
async function readQueue(db: Database): Promise<OperationQueue | undefined> {
  try {
    return await operationQueue(db);
  } catch {
    return undefined;
  }
}
