import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerType } from '@hono/node-server';
import { createAdaptorServer } from '@hono/node-server';
import { answerClientErrors } from './client-error.js';
import { Drain } from './drain.js';
import { LINGER, type LingerBounds, lingerOnClose } from './linger.js';
import type { FetchHandler } from './pipeline.js';

/** A listening server and how to stop it. */
export interface RunningServer {
  server: ServerType;
  /** `http://host:port`, with the port actually bound (useful with port 0 in tests). */
  url: string;
  /**
   * SIGTERM: every request that arrives from now on is answered with `Connection: close`, so
   * keep-alive clients move to other replicas.
   */
  endKeepAlive(): void;
  /**
   * The end of a drain: stops accepting once no client is connecting (so none is reset mid-connect)
   * and resolves when every connection has ended, none closed under a client; see {@link Drain}.
   * Idle keep-alive connections end after their next answer or at their keep-alive timeout.
   */
  drain(): Promise<void>;
  /**
   * Stops accepting and ends idle keep-alive connections at once (a request sent on one at that
   * moment is reset), resolves when closed: for tests and tools; a replica stops with {@link drain}.
   */
  close(): Promise<void>;
}

/**
 * Serves the core over node:http. The adapter is @hono/node-server's (`serve({ fetch })`), used as
 * an adapter only: Hono's router is not involved, ours comes from the spec. Chosen by measurement
 * (docs/framework.md): it builds the `Request` lazily and writes plain-header `Response`s without
 * materialising undici objects, which a naive own adapter cannot match (0.59× vs 0.14× bare node:http).
 * It streams bodies both ways, sends several `Set-Cookie` headers as separate lines, aborts
 * `request.signal` when the client disconnects, and drains unread request bodies (for half a second;
 * a connection it then closes lingers, {@link lingerOnClose}).
 *
 * Note: it replaces the global `Request`/`Response` with lightweight subclasses (its fast path);
 * they behave as the standard ones.
 *
 * @example
 * const running = await listen(async () => new Response('ok'), { port: 0 });
 * await fetch(running.url);
 * await running.close();
 * // a replica on SIGTERM: running.endKeepAlive(); then, after the drain delay, await running.drain();
 */
export function listen(
  core: FetchHandler,
  options: { port?: number; hostname?: string; requestTimeoutMs?: number; linger?: LingerBounds } = {},
): Promise<RunningServer> {
  const hostname = options.hostname ?? '127.0.0.1';
  const drain = new Drain(core);
  const server = createAdaptorServer({ fetch: drain.fetch, hostname });
  // createAdaptorServer makes a node:http server unless told to make another kind.
  const http = server as Server;
  // How long a whole request (headers and body) may take to arrive (node:http answers 408 past it;
  // its default is 5 minutes): the bound on a slow upload, `SVC_REQUEST_TIMEOUT_MS`.
  if (options.requestTimeoutMs !== undefined) http.requestTimeout = options.requestTimeoutMs;
  // A connection closed under a client still sending the body its answer refused ends without a
  // reset, so the client reads that answer (see linger.ts).
  lingerOnClose(http, options.linger ?? LINGER);
  // A request node cannot parse is answered in the published shape (see client-error.ts).
  answerClientErrors(http);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, hostname, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const host = hostname.includes(':') ? `[${hostname}]` : hostname;
      resolve({
        server,
        url: `http://${host}:${port}`,
        endKeepAlive: () => drain.endKeepAlive(http),
        drain: () => drain.stop(http),
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            if ('closeIdleConnections' in server) server.closeIdleConnections();
          }),
      });
    });
  });
}
