import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

/** The metrics listener and how to stop it. */
export interface MetricsServer {
  /** `http://host:port/metrics`, with the port actually bound. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) on a listener of its own, `SVC_METRICS_HOST`
 * (default 127.0.0.1) and `SVC_METRICS_PORT`: metrics are never on the public port, so they need no
 * token; who may scrape is decided by where this port is reachable from (docs/runbook.md).
 *
 * @example
 * const served = await serveMetrics(metrics, { host: '127.0.0.1', port: 9464 });
 * await served.close();
 */
export function serveMetrics(
  metrics: Metrics,
  options: { host: string; port: number },
): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: the metrics are at /metrics\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('GET only\n');
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => {
        response.writeHead(200, { 'content-type': contentType });
        response.end(request.method === 'HEAD' ? undefined : body);
      },
      () => {
        response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n');
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}/metrics`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
