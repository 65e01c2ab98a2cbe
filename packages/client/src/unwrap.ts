import { ApiError } from './errors.js';
import { parseRetryAfter } from './retry.js';

/**
 * Builds the {@link ApiError} for a non-2xx response from its already-read body: the parsed error
 * envelope, a string (not JSON), or undefined (empty body).
 *
 * @example
 * import { errorFromResponse } from '@svc/client';
 * const err = errorFromResponse(new Response(null, { status: 502 }), undefined);
 * console.log(err.code); // "unknown"
 */
export function errorFromResponse(response: Response, body: unknown, cause?: unknown): ApiError {
  const { status, statusText, headers } = response;
  const common = {
    status,
    requestId: headers.get('Request-Id') ?? undefined,
    retryAfterMs: parseRetryAfter(headers.get('Retry-After')),
    body,
    cause,
  };
  const envelope = (body as { error?: Record<string, unknown> } | null | undefined)?.error;
  if (typeof envelope?.code === 'string') {
    const { code, message, details, request_id } = envelope;
    return new ApiError(typeof message === 'string' && message ? message : code, {
      ...common,
      code,
      details,
      requestId: typeof request_id === 'string' ? request_id : common.requestId,
    });
  }
  // Not our envelope: a proxy page, an empty body, a gateway timeout. Keep the text for debugging.
  const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
  return new ApiError(`HTTP ${`${status} ${statusText}`.trim()}${text ? `: ${text.slice(0, 200)}` : ''}`, {
    ...common,
    code: 'unknown',
    details: text ? { body: text } : null,
  });
}

/** What openapi-fetch's methods resolve to. */
interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/**
 * The success body of a call; `undefined` for a body-less success such as 204 (openapi-fetch types
 * that as `never`, which would make the code after `await unwrap(...)` unreachable).
 *
 * @example
 * import type { Unwrapped } from '@svc/client';
 * type Body = Unwrapped<{ data?: { ok: true }; response: Response }>; // { ok: true }
 */
export type Unwrapped<R extends FetchResult> = [Exclude<R['data'], undefined>] extends [never]
  ? undefined
  : Exclude<R['data'], undefined>;

/**
 * Turns openapi-fetch's `{data, error, response}` into the success body, throwing {@link ApiError} for
 * any non-2xx status. Accepts the promise directly, so a call reads as one expression.
 *
 * @example
 * import { createClient, unwrap } from '@svc/client';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { identity } = await unwrap(client.GET('/me'));
 */
export async function unwrap<R extends FetchResult>(result: R | Promise<R>): Promise<Unwrapped<R>> {
  const { data, error, response } = await result;
  if (!response.ok) throw errorFromResponse(response, error);
  return data as Unwrapped<R>;
}
