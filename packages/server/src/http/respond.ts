import { ERROR_STATUS, type ErrorCode } from '../errors.js';

/** Builds a JSON response with the request's headers; `body` undefined sends none. */
export type JsonResponder = (status: number, body?: unknown, headers?: Record<string, string>) => Response;

/**
 * Builds a response in the published error envelope `{"error": {code, message, details, request_id}}`.
 * There is no status argument: it is the code's, from {@link ERROR_STATUS} (design §9), so the two
 * cannot disagree.
 */
export type ErrorResponder = (
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  headers?: Record<string, string>,
) => Response;

/**
 * The two response builders of one request. `base` (CORS) and `extra` (headers collected while the
 * request runs, such as `RateLimit`) are read when a response is built, so later additions to `extra`
 * are sent. Every response carries `Request-Id`, and an error's `request_id` is the same value.
 *
 * @example
 * const { error } = responders('01jexample', {}, {});
 * error('unauthenticated', 'A Bearer token is required.').status; // 401
 */
export function responders(
  requestId: string,
  base: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>>,
): { json: JsonResponder; error: ErrorResponder } {
  const json: JsonResponder = (status, body, headers) =>
    new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: {
        ...base,
        ...extra,
        ...headers,
        'request-id': requestId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
    });
  const error: ErrorResponder = (code, message, details = {}, headers) =>
    json(ERROR_STATUS[code], { error: { code, message, details, request_id: requestId } }, headers);
  return { json, error };
}
