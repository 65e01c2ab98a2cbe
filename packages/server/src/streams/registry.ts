import { WaitSlots } from '../computers/computer-waits.js';
import type { Principal } from '../identity/auth/authenticate.js';
import { ApiError } from '../platform/errors.js';
import type { Log } from '../platform/observe/log.js';

/** The `details.policy` of a 429 for one stream too many (the spec's `ErrorDetails.policy`). */
const STREAMS_POLICY = 'streams';

/** How often an open stream re-checks its caller's access at the least (it also does on every wake-up). */
export const RECHECK_MS = 500;
/** How often a stream reads its log when no notification woke it (a lost one only delays an event). */
export const POLL_MS = 1000;
/** What `stream.ended` tells a client to wait before reconnecting (`retry:`). */
export const RETRY_MS = 1000;

/** The settings of {@link Streams}: `SVC_STREAMS_PER_PRINCIPAL` and `SVC_STREAM_KEEPALIVE_MS`. */
export interface StreamSettings {
  perPrincipal: number;
  keepaliveMs: number;
  /** Milliseconds since the epoch: the app's clock, which access tokens' `exp` is read against. */
  now?: () => number;
}

/**
 * The event streams this replica serves: each principal's share of them (one more than
 * `perPrincipal` is `429 rate_limited`, policy `streams`), the keep-alive period, the way back to
 * authentication (each stream re-checks its caller's token, principal and role), and the drain: when
 * the replica drains, {@link end} ends every open stream at once (`stream.ended`, `shutting_down`) and
 * a stream asked for from then on is `503 unavailable`, so the connections close and the clients
 * reconnect to another replica.
 *
 * @example
 * const streams = new Streams({ perPrincipal: 16, keepaliveMs: 15_000 });
 * streams.bind({ authenticate, log });
 * const handle = streams.open(principal.id); // throws 429 / 503
 * handle.onEnd(() => wakeUp()); // the drain
 * handle.close();
 */
export class Streams {
  readonly keepaliveMs: number;
  readonly now: () => number;
  readonly #slots: WaitSlots;
  readonly #open = new Set<OpenStream>();
  #ending = false;
  #authenticate: ((authorization: string | null) => Promise<Principal>) | undefined;
  #log: Log = () => {};

  constructor(settings: StreamSettings) {
    this.keepaliveMs = settings.keepaliveMs;
    this.now = settings.now ?? Date.now;
    this.#slots = new WaitSlots(settings.perPrincipal, {
      policy: STREAMS_POLICY,
      what: 'event streams open',
    });
  }

  /** Called once by the app when authentication is built (after the handlers' deps). */
  bind(options: { authenticate: (authorization: string | null) => Promise<Principal>; log: Log }): void {
    this.#authenticate = options.authenticate;
    this.#log = options.log;
  }

  /** The caller of `authorization` as authentication sees it now (the principal cache, ≤ 1 s old). */
  authenticate(authorization: string | null): Promise<Principal> {
    if (!this.#authenticate) throw new Error('Streams.bind was not called');
    return this.#authenticate(authorization);
  }

  /** Reports what went wrong in an open stream (it has no response left to carry an error). */
  log(message: string, fields: Record<string, unknown>): void {
    this.#log(message, fields);
  }

  /** Streams open now (tests, metrics). */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Takes one of the principal's streams: 429 `rate_limited` (policy `streams`) when it holds all of
   * them here, 503 `unavailable` while the replica drains.
   */
  open(principalId: string): OpenStream {
    if (this.#ending)
      throw new ApiError('unavailable', 'this server is shutting down; reconnect to resume', {
        headers: { 'retry-after': '1' },
      });
    const release = this.#slots.take(principalId);
    const stream = new OpenStream(() => {
      release();
      this.#open.delete(stream);
    });
    this.#open.add(stream);
    return stream;
  }

  /** The drain: every open stream ends now (`shutting_down`), and none opens any more. */
  end(): void {
    this.#ending = true;
    for (const stream of this.#open) stream.end();
  }
}

/** One open stream's place in {@link Streams}: told when the replica drains, given back on close. */
export class OpenStream {
  #ended = false;
  #listeners = new Set<() => void>();
  readonly #release: () => void;

  constructor(release: () => void) {
    this.#release = release;
  }

  /** Whether the replica asked this stream to end (it drains). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Calls `listener` once when the replica drains; returns how to stop listening. */
  onEnd(listener: () => void): () => void {
    if (this.#ended) {
      listener();
      return () => {};
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const listener of this.#listeners) listener();
    this.#listeners.clear();
  }

  /** Gives the principal's slot back (idempotent). */
  close(): void {
    this.#listeners.clear();
    this.#release();
  }
}
