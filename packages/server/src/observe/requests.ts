import { pathOf } from '../http/path.js';
import type { FetchHandler } from '../http/pipeline.js';
import { type Logger, REQUEST_LINE_REDACT_PATHS } from './logger.js';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing.js';

/** What the pipeline learns about a request that its log line, metrics and span report. */
export interface RequestNotes {
  requestId?: string;
  operationId?: string;
  principalId?: string;
}

const notes = new WeakMap<Request, RequestNotes>();

/**
 * Records facts about `request` as the pipeline learns them (its id, its operation, who called).
 * Cheap and harmless when nothing observes the request.
 *
 * @example
 * noteRequest(request, { operationId: 'getMe' });
 */
export function noteRequest(request: Request, facts: RequestNotes): void {
  const known = notes.get(request);
  if (known) Object.assign(known, facts);
  else notes.set(request, { ...facts });
}

/** How the server is observed: all optional but the logger. */
export interface Observability {
  logger: Logger;
  metrics?: Metrics | undefined;
  tracing?: Tracing | undefined;
}

/**
 * Wraps the server's `fetch`: per request, one `info` log line (`request_id`, `principal_id`,
 * `operation_id`, method, path without the query, `status`, `duration_ms`; never a header or a body),
 * the request counter and latency histogram, and a span when tracing is on. Requests outside `/v1` are
 * labelled by area (`signin`, `oauth`, `mcp`); a request answered before it was routed (a 404, or a 429 of the
 * principal limit, which is checked first) is `unrouted`.
 *
 * @example
 * const fetch = observeRequests(app.fetch, { logger, metrics });
 */
export function observeRequests(fetch: FetchHandler, observe: Observability): FetchHandler {
  const { metrics, tracing } = observe;
  // The hot path's own child: the same destination and fields, a redaction sized to its flat line.
  const logger = observe.logger.child(
    {},
    { redact: { paths: [...REQUEST_LINE_REDACT_PATHS], censor: '[redacted]' } },
  );
  const settle = (request: Request, response: Response, started: number) => {
    const note = notes.get(request);
    const path = pathOf(request.url);
    const operation = note?.operationId ?? areaOf(path);
    const seconds = (performance.now() - started) / 1000;
    metrics?.observeRequest(operation, response.status, seconds);
    if (logger.isLevelEnabled('info'))
      logger.info(
        {
          request_id: note?.requestId,
          principal_id: note?.principalId,
          operation_id: operation,
          method: request.method,
          path,
          status: response.status,
          duration_ms: Math.round(seconds * 10_000) / 10,
        },
        'request',
      );
  };
  const plain: FetchHandler = async (request, env) => {
    const started = performance.now();
    try {
      const response = await fetch(request, env);
      settle(request, response, started);
      return response;
    } catch (error) {
      // The pipeline answers its own errors; this is the adapter's last resort, logged without detail.
      settle(request, new Response(null, { status: 500 }), started);
      throw error;
    }
  };
  if (!tracing) return plain;
  return (request, env) =>
    tracing.request(
      request,
      pathOf(request.url),
      () => plain(request, env),
      (response) => {
        const note = notes.get(request);
        return { operationId: note?.operationId, requestId: note?.requestId, status: response.status };
      },
    );
}

function areaOf(path: string): string {
  if (path.startsWith('/signin')) return 'signin';
  if (path === '/mcp') return 'mcp';
  if (path.startsWith('/oauth/') || path.startsWith('/.well-known/')) return 'oauth';
  return 'unrouted';
}
