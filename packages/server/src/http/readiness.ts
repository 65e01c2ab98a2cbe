import { RequestContext } from './context.js';
import { isPath } from './path.js';
import type { FetchHandler } from './pipeline.js';

/**
 * The answer to a request that arrives after the port is bound but before the app is built: the
 * published error envelope, 503 `unavailable` with `Retry-After: 1` (clients retry it like any 503).
 *
 * @example
 * const fetch = (request) => (app ? app.fetch(request) : Promise.resolve(notYetServing(request)));
 */
export function notYetServing(request: Request): Response {
  return new RequestContext(request).error(
    'unavailable',
    'the server is starting; retry shortly',
    {},
    { 'retry-after': '1' },
  );
}

/** Where a replica is in its life: not yet serving, serving, or draining before it exits. */
export type Phase = 'starting' | 'ready' | 'draining';

/**
 * A replica's readiness, answered at `GET /ready` (outside `/v1` and outside the spec: it is for load
 * balancers and orchestrators, not API clients). `503 {"status":"starting"}` until the database is
 * migrated and the operation worker runs, `200 {"status":"ready"}` while serving, and
 * `503 {"status":"draining"}` from SIGTERM on; `/v1/health` stays the liveness check. While draining,
 * answers close their connections: the listener's part (`RunningServer.endKeepAlive`).
 *
 * @example
 * const lifecycle = new Lifecycle();
 * const running = await listen(lifecycle.wrap(core));
 * lifecycle.markReady();
 */
export class Lifecycle {
  #phase: Phase = 'starting';

  get phase(): Phase {
    return this.#phase;
  }

  /** Migrations ran and the worker is up: the replica takes traffic. */
  markReady(): void {
    if (this.#phase === 'starting') this.#phase = 'ready';
  }

  /** SIGTERM: not ready any more. */
  beginDrain(): void {
    this.#phase = 'draining';
  }

  /** `fetch` with `/ready` in front of it. */
  wrap(fetch: FetchHandler): FetchHandler {
    return (request, env) => {
      if (isPath(request.url, '/ready')) return Promise.resolve(this.readiness(request.method));
      return fetch(request, env);
    };
  }

  private readiness(method: string): Response {
    if (method !== 'GET' && method !== 'HEAD')
      return Response.json({ status: this.#phase }, { status: 405, headers: { allow: 'GET, HEAD' } });
    const ready = this.#phase === 'ready';
    return new Response(method === 'HEAD' ? null : JSON.stringify({ status: this.#phase }), {
      status: ready ? 200 : 503,
      headers: {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        ...(ready ? {} : { 'retry-after': '1' }),
      },
    });
  }
}

/** What {@link drainAndStop} stops, in order. */
export interface ShutdownSteps {
  lifecycle: Lifecycle;
  /** How long to keep serving after readiness turns 503, so balancers stop sending (`SVC_DRAIN_DELAY_MS`). */
  drainDelayMs: number;
  /** The whole shutdown's bound (`SVC_SHUTDOWN_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Every request from now on is answered with `Connection: close` (`RunningServer.endKeepAlive`). */
  endKeepAlive(): void;
  /**
   * Ends the open event streams at once (`stream.ended`, `shutting_down`; `App.endStreams`): a stream
   * never ends by itself, so waiting for its connection would only wait for the deadline to cut it.
   */
  endStreams?(): void;
  /** Stops the worker claiming at once; what it holds may run until the deadline, then is handed back. */
  stopWorker(timeoutMs: number): Promise<void>;
  /**
   * Closes the listener; resolves when every connection has ended, each after its last answer
   * (`RunningServer.drain`).
   */
  closeListener(): Promise<void>;
  /** Cuts the connections still open (the deadline passed). */
  cutConnections(): void;
  /** Everything after: the app, the database, metrics, tracing. */
  closeRest(): Promise<void>;
}

/**
 * The graceful shutdown of one replica: readiness turns 503, every answer closes its connection,
 * the open event streams end (their clients reconnect elsewhere) and the worker stops claiming, at
 * once; after `drainDelayMs` the listener closes and the connections end as their requests are answered; the worker's operations in hand finish, or at the deadline are
 * handed back to the other replicas; then the rest closes. Answers `false` when the deadline cut
 * something short.
 *
 * @example
 * const clean = await drainAndStop({ lifecycle, drainDelayMs: 2000, timeoutMs: 30_000, ... });
 * process.exit(clean ? 0 : 1);
 */
export async function drainAndStop(steps: ShutdownSteps): Promise<boolean> {
  const deadline = Date.now() + steps.timeoutMs;
  steps.lifecycle.beginDrain();
  steps.endKeepAlive();
  steps.endStreams?.();
  const left = () => Math.max(0, deadline - Date.now());
  // The worker gets until the deadline minus a little for closing the database.
  const worker = steps.stopWorker(Math.max(0, steps.timeoutMs - 1000));
  await sleep(Math.min(steps.drainDelayMs, left()));
  let cut = false;
  const timer = setTimeout(() => {
    cut = true;
    steps.cutConnections();
  }, left());
  try {
    await Promise.all([steps.closeListener(), worker]);
  } finally {
    clearTimeout(timer);
  }
  await steps.closeRest();
  return !cut;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
