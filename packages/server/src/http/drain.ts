import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { NodeEnv } from './node-env.js';
import type { FetchHandler } from './pipeline.js';

/**
 * How long no client may have connected, nor been told to reconnect, before the listener closes. A
 * client reconnects within a millisecond of its answer on an idle machine; the rest is for a busy one.
 */
const QUIET_MS = 100;
/** The longest {@link Drain.stop} waits for that quiet before it closes the listener anyway. */
const MAX_QUIET_WAIT_MS = 1000;

/**
 * How a listener stops without resetting a connection a client has opened or a request it has sent.
 *
 * - From {@link Drain.endKeepAlive} (SIGTERM) on, every request that arrives is answered with
 *   `Connection: close`: Node ends the connection once the answer is written, and the client sends
 *   its next request elsewhere.
 * - {@link Drain.stop} stops accepting only while no client is connecting. Closing a listening
 *   socket resets every connection the kernel has completed and Node not yet accepted (the client sees
 *   ECONNRESET, perhaps after sending its request), and clients told to close reconnect at once. So
 *   from then on such answers wait until the listener is closed, and it closes once no connection has
 *   come in and no client been told to reconnect for {@link QUIET_MS}: every client then waits on a
 *   connection already accepted, and a later one is refused (ECONNREFUSED: nothing was sent).
 * - No connection is closed under a client. The listener closes with `net.Server#close`, not
 *   `http.Server#close`, whose `closeIdleConnections()` destroys a keep-alive connection the client
 *   may be sending on at that moment (and one whose last answer is not all written yet). Such a
 *   connection ends after its next answer, or at the keep-alive timeout Node announced to the client
 *   (`Keep-Alive: timeout=5`, after which clients do not reuse it); the caller's deadline cuts the rest.
 *
 * @example
 * const drain = new Drain(core);
 * const server = createAdaptorServer({ fetch: drain.fetch });
 * drain.endKeepAlive(server); // SIGTERM
 * await drain.stop(server); // after the drain delay; resolves when every connection has ended
 */
export class Drain {
  /** `core` with the drain's part of each answer (while serving, `core` itself). */
  readonly fetch: FetchHandler;
  #phase: 'serving' | 'draining' | 'closing' | 'closed' = 'serving';
  /** When a connection was last accepted or a client last told to reconnect (performance.now()). */
  #lastActivity = 0;
  /** Settles when the listener is closed. */
  #listenerClosed: Promise<void> | undefined;
  #ended: Promise<void> | undefined;
  readonly #onConnection = () => {
    this.#lastActivity = performance.now();
  };

  constructor(core: FetchHandler) {
    this.fetch = (request, env) =>
      this.#phase === 'serving' ? core(request, env) : this.#answer(core, request, env);
  }

  /** Every request that arrives from now on is answered with `Connection: close`. */
  endKeepAlive(server: Server): void {
    if (this.#phase !== 'serving') return;
    this.#phase = 'draining';
    this.#lastActivity = performance.now();
    server.on('connection', this.#onConnection);
  }

  /**
   * Stops accepting once no client is connecting (waiting at most {@link MAX_QUIET_WAIT_MS}), then
   * resolves when every connection has ended. Idle keep-alive connections are left to their next
   * answer or their keep-alive timeout; cut them at a deadline with `closeAllConnections()`.
   */
  stop(server: Server): Promise<void> {
    this.endKeepAlive(server);
    this.#ended ??= this.#stop(server);
    return this.#ended;
  }

  async #stop(server: Server): Promise<void> {
    let listenerClosed!: () => void;
    this.#listenerClosed = new Promise((resolve) => {
      listenerClosed = resolve;
    });
    this.#phase = 'closing';
    const until = performance.now() + MAX_QUIET_WAIT_MS;
    for (;;) {
      const wait = Math.min(this.#lastActivity + QUIET_MS, until) - performance.now();
      if (wait <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    server.off('connection', this.#onConnection);
    // The callback runs once the last connection has ended (with an error if it was closed already).
    const ended = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    this.#phase = 'closed';
    listenerClosed();
    await ended;
  }

  async #answer(core: FetchHandler, request: Request, env: NodeEnv | undefined): Promise<Response> {
    const outgoing = env?.outgoing;
    // Node then ends the connection once this answer is written, and says so to the client.
    if (outgoing && !outgoing.headersSent) outgoing.setHeader('connection', 'close');
    const response = await core(request, env);
    // This answer sends its client to reconnect: not while the listener could still accept it.
    if (this.#phase === 'closing') await this.#listenerClosed;
    this.#lastActivity = performance.now();
    return response;
  }
}
