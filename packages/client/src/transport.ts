import type { TokenSource } from './auth/tokens.js';
import { sendFailure } from './errors.js';

/**
 * Sends the attempts of one call: `prepare` builds a fresh Request for each (a body can be read once; a
 * token may change), `canRetry` is false when a repeat would not be safe. Rejects with
 * {@link NetworkError} when no response came, or with the signal's reason on an abort.
 */
export type Send = (
  prepare: () => Promise<Request>,
  fetch: (request: Request) => Promise<Response>,
  canRetry: boolean,
) => Promise<Response>;

/** The default {@link Send}: one attempt. `@svc/client/retry` brings the retrying one. */
const sendOnce: Send = async (prepare, fetch) => {
  const request = await prepare();
  try {
    return await fetch(request);
  } catch (cause) {
    throw sendFailure(request, cause, 1);
  }
};

/**
 * Request bodies that can be read once only (a stream being uploaded): the transport sends their
 * request as is, never a copy, since copying would tee the stream and keep every byte sent in memory.
 */
const ONE_SHOT = new WeakSet<ReadableStream<Uint8Array>>();

/**
 * Marks a request body as read-once: its call is sent in one attempt (no retry, no second try after a
 * 401), and never buffered. Returns the body.
 *
 * @example
 * import { oneShot } from './transport.js';
 * const body = oneShot(new Blob(['hello']).stream());
 */
export function oneShot(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  ONE_SHOT.add(body);
  return body;
}

export interface TransportOptions {
  fetch: (request: Request) => Promise<Response>;
  tokens: TokenSource;
  send: Send | undefined;
  idempotencyKey: (() => string) | false;
  userAgent: string | undefined;
}

/**
 * The fetch handed to openapi-fetch. Middleware cannot re-send a request (openapi-typescript #1558,
 * #2075), so auth, idempotency keys and retries live here: each attempt sends a copy of the original
 * Request, whose body therefore stays readable.
 */
export function createTransport(options: TransportOptions): (input: Request) => Promise<Response> {
  const { tokens, send = sendOnce } = options;
  return async (input) => {
    const base = input;
    if (options.userAgent && !base.headers.has('User-Agent'))
      base.headers.set('User-Agent', options.userAgent);
    const safe = /^(GET|HEAD|OPTIONS)$/.test(base.method);
    // Generated once per call, before the first attempt, so every retry carries the same key.
    if (!safe && options.idempotencyKey && !base.headers.has('Idempotency-Key')) {
      base.headers.set('Idempotency-Key', options.idempotencyKey());
    }
    const once = base.body !== null && ONE_SHOT.has(base.body);
    const canRetry = !once && (safe || base.headers.has('Idempotency-Key'));
    const callerAuth = base.headers.has('Authorization');

    let sentToken: string | undefined;
    let rejected: string | undefined;
    const prepare = async () => {
      // Not just base.clone(): in Node's undici a clone's signal follows the original only through a
      // WeakRef, so after a GC an abort (the caller's, or waitForOperations' deadline) is silently lost.
      // A Request constructed with an explicit signal keeps its link alive.
      // A read-once body moves into the request sent (no tee); it is sent once only.
      const request = new Request(once ? base : base.clone(), { signal: base.signal });
      if (!callerAuth) {
        sentToken = await tokens.token({ rejected, signal: base.signal });
        if (sentToken !== undefined) request.headers.set('Authorization', `Bearer ${sentToken}`);
      }
      return request;
    };

    const response = await send(prepare, options.fetch, canRetry);
    if (response.status !== 401 || once || callerAuth || !tokens.renewable || sentToken === undefined)
      return response;
    // One more round with a fresh token, never more: a second 401 is the answer.
    rejected = sentToken;
    await response.body?.cancel();
    return send(prepare, options.fetch, canRetry);
  };
}
