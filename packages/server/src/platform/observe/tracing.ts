import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { Database, Queryable, QueryResult } from '../db/database.js';

/** What a request span learns once the pipeline has answered. */
export interface RequestFacts {
  operationId: string | undefined;
  requestId: string | undefined;
  status: number;
}

/** OpenTelemetry tracing of the server: a span per request and per database query inside one. */
export interface Tracing {
  /** Runs `handle` inside a server span (continuing an incoming W3C `traceparent`); `path` is the request's, without its query. */
  request(
    request: Request,
    path: string,
    handle: () => Promise<Response>,
    facts: (response: Response) => RequestFacts,
  ): Promise<Response>;
  /** `db` with a client span around every query and transaction made while a request is traced. */
  database(db: Database): Database;
  /** Sends what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** The environment: tracing is on when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (and `OTEL_SDK_DISABLED` is not `true`). */
  env?: Record<string, string | undefined>;
  /** Exports here instead of OTLP, span by span (tests: `InMemorySpanExporter`); turns tracing on. */
  exporter?: SpanExporter;
  /** `service.version` of the resource. */
  version?: string;
}

/**
 * Starts tracing when it is configured, else answers `undefined` having loaded nothing: the
 * OpenTelemetry packages are imported here, dynamically, only when `OTEL_EXPORTER_OTLP_ENDPOINT` is
 * set (or an exporter is passed). Spans go over OTLP/HTTP through a batch processor; the exporter
 * reads the standard `OTEL_EXPORTER_OTLP_*` variables itself, the batch the standard `OTEL_BSP_*` ones
 * ({@link batchOptions}), and `OTEL_SERVICE_NAME` names the service (default `svc-server`). Queries outside a request (the worker's polling, housekeeping) are not traced.
 *
 * @example
 * const tracing = await startTracing({ env: process.env });
 * const db = tracing ? tracing.database(rawDb) : rawDb;
 */
export async function startTracing(options: TracingOptions = {}): Promise<Tracing | undefined> {
  const env = options.env ?? {};
  if (!options.exporter && (!env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_SDK_DISABLED === 'true'))
    return undefined;
  const api = await import('@opentelemetry/api');
  const sdk = await import('@opentelemetry/sdk-trace');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  let processor: InstanceType<typeof sdk.SimpleSpanProcessor> | InstanceType<typeof sdk.BatchSpanProcessor>;
  if (options.exporter) processor = new sdk.SimpleSpanProcessor({ exporter: options.exporter });
  else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processor = new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptions(env) });
  }
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME || 'svc-server',
      ...(options.version ? { 'service.version': options.version } : {}),
    }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('@svc/server', options.version);
  const propagator = new W3CTraceContextPropagator();
  // The active span travels with the request's async work; nothing is registered globally.
  const active = new AsyncLocalStorage<Context>();
  const headerGetter = {
    get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
    keys: (headers: Headers) => [...headers.keys()],
  };

  const traceQueries = (target: Queryable, engine: string): Queryable => ({
    query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
      const parent = active.getStore();
      if (!parent) return target.query<Row>(sql, params);
      return inSpan(tracer, api, parent, querySpanName(sql), dbAttributes(engine, sql), () =>
        target.query<Row>(sql, params),
      );
    },
    exec(sql: string): Promise<void> {
      const parent = active.getStore();
      if (!parent) return target.exec(sql);
      return inSpan(tracer, api, parent, querySpanName(sql), dbAttributes(engine, sql), () =>
        target.exec(sql),
      );
    },
    // In a transaction this only registers the statement; its time is the COMMIT's, in the
    // transaction's span.
    commitWith: (statement) => target.commitWith(statement),
  });

  return {
    async request(request, path, handle, facts) {
      const method = request.method;
      const parent = propagator.extract(api.ROOT_CONTEXT, request.headers, headerGetter);
      const span = tracer.startSpan(
        method,
        {
          kind: api.SpanKind.SERVER,
          attributes: { 'http.request.method': method, 'url.path': path },
        },
        parent,
      );
      try {
        const response = await active.run(api.trace.setSpan(parent, span), handle);
        const known = facts(response);
        if (known.operationId) {
          span.updateName(`${method} ${known.operationId}`);
          span.setAttribute('svc.operation_id', known.operationId);
        }
        if (known.requestId) span.setAttribute('svc.request_id', known.requestId);
        span.setAttribute('http.response.status_code', known.status);
        if (known.status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
        return response;
      } catch (error) {
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
    database(db) {
      const engine = db.engine === 'postgres' ? 'postgresql' : 'pglite';
      const traced = traceQueries(db, engine);
      return Object.assign(Object.create(db) as Database, {
        query: traced.query,
        exec: traced.exec,
        commitWith: traced.commitWith,
        transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
          const parent = active.getStore();
          if (!parent) return db.transaction(fn);
          const span = tracer.startSpan(
            'transaction',
            { kind: api.SpanKind.CLIENT, attributes: { 'db.system.name': engine } },
            parent,
          );
          const inside = api.trace.setSpan(parent, span);
          return db
            .transaction((tx) => active.run(inside, () => fn(traceQueries(tx, engine))))
            .then(
              (result) => {
                span.end();
                return result;
              },
              (error: unknown) => {
                span.setStatus({ code: api.SpanStatusCode.ERROR });
                span.end();
                throw error;
              },
            );
        },
      });
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}

type Api = typeof import('@opentelemetry/api');

async function inSpan<T>(
  tracer: Tracer,
  api: Api,
  parent: Context,
  name: string,
  attributes: Record<string, string>,
  run: () => Promise<T>,
): Promise<T> {
  const span: Span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes }, parent);
  try {
    return await run();
  } catch (error) {
    // The statement's text is on the span already; the error's message may quote values, so only its class.
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error).name });
    throw error;
  } finally {
    span.end();
  }
}

/** Parameters are never recorded: the text has `$1…` placeholders, values stay out of traces. */
function dbAttributes(engine: string, sql: string): Record<string, string> {
  return { 'db.system.name': engine, 'db.query.text': sql, 'db.operation.name': operationOf(sql) };
}

function operationOf(sql: string): string {
  return /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
}

/**
 * The batch processor's bounds from the standard `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_SCHEDULE_DELAY`
 * (ms), `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` and `OTEL_BSP_EXPORT_TIMEOUT` (ms), which the SDK no longer
 * reads itself; unset or not a positive whole number: the SDK's default (2048 spans, 5 s, 512, 30 s).
 */
export function batchOptions(env: Record<string, string | undefined>): {
  maxQueueSize?: number;
  scheduledDelayMillis?: number;
  maxExportBatchSize?: number;
  exportTimeoutMillis?: number;
} {
  const read = (name: string) => {
    const value = Number(env[name]);
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  };
  const options = {
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
  };
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

function querySpanName(sql: string): string {
  const operation = operationOf(sql);
  const table = /\b(?:FROM|INTO|UPDATE|JOIN)\s+([a-z_]+)/i.exec(sql)?.[1];
  return table ? `${operation} ${table}` : operation;
}
