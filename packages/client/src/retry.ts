import type { ClientOptions } from './client.js';
import { sendFailure } from './errors.js';
import type { Send } from './transport.js';

/**
 * How hard to retry a call that failed with 429, 503, a network error, or 409 `idempotency_key_in_use`.
 * Delays grow as `baseDelayMs * 2^(attempt-1)` capped at `maxDelayMs`, with full jitter; a `Retry-After`
 * from the server replaces the computed delay, and one longer than `maxDelayMs` ends the retries (the
 * caller gets the response, and {@link ApiError.retryAfterMs} says how long to wait).
 *
 * @example
 * import type { RetryOptions } from '@svc/client';
 * const patient: RetryOptions = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 60_000 };
 */
export interface RetryOptions {
  /** Total attempts, the first included. 1 disables retries. Default 4. */
  maxAttempts?: number;
  /** Default 250. */
  baseDelayMs?: number;
  /** Default 30 000. */
  maxDelayMs?: number;
}

/**
 * Waits `ms`, rejecting with `signal.reason` as soon as the signal aborts. Injectable so tests can
 * record delays instead of waiting.
 *
 * @example
 * import type { Sleep } from '@svc/client';
 * const delays: number[] = [];
 * const recordOnly: Sleep = async (ms) => { delays.push(ms); };
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The default {@link Sleep}: a timer that an AbortSignal cancels. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

/**
 * `Retry-After` as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent
 * or unparsable. A date in the past means "now".
 *
 * @example
 * import { parseRetryAfter } from '@svc/client';
 * parseRetryAfter('2'); // 2000
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface RetryLoop {
  policy: Required<RetryOptions>;
  sleep: Sleep;
  random: () => number;
  now: () => number;
}

/**
 * Sends a request until it succeeds, fails for good, or the attempts run out. `prepare` builds a fresh
 * Request for every attempt (a body can be read once; a token or an assertion may change), and errors
 * it throws are not retried. `canRetry` false sends exactly once.
 */
export async function sendWithRetries(
  prepare: (attempt: number) => Promise<Request>,
  send: (request: Request) => Promise<Response>,
  { canRetry, loop }: { canRetry: boolean; loop: RetryLoop },
): Promise<Response> {
  const { policy } = loop;
  const maxAttempts = canRetry ? Math.max(1, policy.maxAttempts) : 1;
  for (let attempt = 1; ; attempt++) {
    const request = await prepare(attempt);
    const last = attempt >= maxAttempts;
    let delay: number | undefined;
    try {
      const response = await send(request);
      if (last || !(await isRetryableResponse(response, request))) return response;
      delay = parseRetryAfter(response.headers.get('Retry-After'), loop.now());
      if (delay !== undefined && delay > policy.maxDelayMs) return response;
      await response.body?.cancel();
    } catch (cause) {
      // An abort is the caller's decision, not a network failure: it passes through untouched.
      if (last || request.signal.aborted) throw sendFailure(request, cause, attempt);
    }
    // Full-jitter exponential backoff, unless the server said how long to wait.
    delay ??= Math.floor(
      loop.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)),
    );
    await loop.sleep(delay, request.signal);
  }
}

async function isRetryableResponse(response: Response, request: Request): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true;
  // The first request with this key is still running (design §10): asking again with the same key
  // returns its stored result once it is done.
  if (response.status === 409 && request.headers.has('Idempotency-Key')) {
    const body: unknown = await response
      .clone()
      .json()
      .catch(() => undefined);
    return (body as { error?: { code?: unknown } } | undefined)?.error?.code === 'idempotency_key_in_use';
  }
  return false;
}

/**
 * Options of the `createClient` of `@svc/client/retry` and `@svc/client/node`: the main entry's, plus
 * the retry policy and what it runs on.
 *
 * @example
 * import type { RetryClientOptions } from '@svc/client/retry';
 * const options: RetryClientOptions = { baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...', retry: { maxAttempts: 2 } };
 */
export interface RetryClientOptions extends ClientOptions {
  /** Retry policy for 429, 503, network errors and 409 `idempotency_key_in_use`; `false` sends each request once. */
  retry?: RetryOptions | false | undefined;
  /** Waits between attempts. Default: a real, abortable timer. */
  sleep?: Sleep | undefined;
  /** Clock for token expiry and `Retry-After` dates. Default `Date.now`. */
  now?: (() => number) | undefined;
  /** Jitter source. Default `Math.random`. */
  random?: (() => number) | undefined;
}

/**
 * The retry loop of {@link RetryClientOptions}, defaults filled in.
 *
 * @example
 * import { retryLoop } from './retry.js';
 * const loop = retryLoop({ retry: { maxAttempts: 2 } });
 */
export function retryLoop(options: RetryClientOptions): RetryLoop {
  return {
    policy: { ...DEFAULT_RETRY, ...(options.retry === false ? { maxAttempts: 1 } : options.retry) },
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
  };
}

/**
 * The transport's {@link Send} that retries with `loop`.
 *
 * @example
 * import { retryLoop, retrySend } from './retry.js';
 * const send = retrySend(retryLoop({}));
 */
export function retrySend(loop: RetryLoop): Send {
  return (prepare, fetch, canRetry) => sendWithRetries(prepare, fetch, { canRetry, loop });
}
