import type { ContextHandler, RequestContext } from '../http/context.js';
import { type Logger, REQUEST_LINE_REDACT_PATHS } from '../platform/observe/logger.js';
import type { Tracing } from '../platform/observe/tracing.js';
import type { Metrics } from './metrics.js';

/** How the server is observed: all optional but the logger. */
export interface Observability {
  logger: Logger;
  metrics?: Metrics | undefined;
  tracing?: Tracing | undefined;
}

/**
 * Wraps the server's outermost step: per request, one `info` log line (`request_id`, `principal_id`,
 * `operation_id`, method, path without the query, `status`, `duration_ms`; never a header or a body),
 * the request counter and latency histogram, and a span when tracing is on. Requests outside `/v1` are
 * labelled by area (`signin`, `oauth`, `mcp`); a request answered before it was routed (a 404, or a 429 of the
 * principal limit, which is checked first) is `unrouted`. What it reports, the steps inside set on the
 * request's context: its id, its operation, its principal.
 *
 * @example
 * const fetch = fetchHandler(observeRequests(front, { logger, metrics }));
 */
export function observeRequests(next: ContextHandler, observe: Observability): ContextHandler {
  const { metrics, tracing } = observe;
  // The hot path's own child: the same destination and fields, a redaction sized to its flat line.
  const logger = observe.logger.child(
    {},
    { redact: { paths: [...REQUEST_LINE_REDACT_PATHS], censor: '[redacted]' } },
  );
  const settle = (c: RequestContext, response: Response, started: number) => {
    const operation = c.operationId ?? areaOf(c.path);
    const seconds = (performance.now() - started) / 1000;
    metrics?.observeRequest(operation, response.status, seconds);
    if (logger.isLevelEnabled('info'))
      logger.info(
        {
          request_id: c.knownRequestId,
          principal_id: c.get('principal')?.id,
          operation_id: operation,
          method: c.request.method,
          path: c.path,
          status: response.status,
          duration_ms: Math.round(seconds * 10_000) / 10,
        },
        'request',
      );
  };
  const plain: ContextHandler = async (c) => {
    const started = performance.now();
    try {
      const response = await next(c);
      settle(c, response, started);
      return response;
    } catch (error) {
      // The pipeline answers its own errors; this is the adapter's last resort, logged without detail.
      settle(c, new Response(null, { status: 500 }), started);
      throw error;
    }
  };
  if (!tracing) return plain;
  return (c) =>
    tracing.request(
      c.request,
      c.path,
      () => plain(c),
      (response) => ({ operationId: c.operationId, requestId: c.knownRequestId, status: response.status }),
    );
}

function areaOf(path: string): string {
  if (path.startsWith('/signin')) return 'signin';
  if (path === '/mcp') return 'mcp';
  if (path.startsWith('/oauth/') || path.startsWith('/.well-known/')) return 'oauth';
  return 'unrouted';
}
