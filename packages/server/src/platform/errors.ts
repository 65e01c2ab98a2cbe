import type { components } from '@svc/contract';
/**
 * HTTP status per error code (design §9): the one place a status is chosen. Error responses take their
 * status from here (`ApiError`, the HTTP layer's `error(code, …)`), so a status and a code cannot
 * disagree. The codes come from the spec's `ErrorCode` enum: a code the spec adds or drops is a type
 * error here until this table follows, and `test/errors.test.ts` checks the codes and statuses against
 * the table in that schema's description in the bundle.
 */
export const ERROR_STATUS = {
  invalid_argument: 400,
  invalid_request: 400,
  idempotency_key_required: 400,
  unauthenticated: 401,
  permission_denied: 403,
  quota_exceeded: 403,
  not_found: 404,
  method_not_allowed: 405,
  already_exists: 409,
  invalid_state: 409,
  operation_in_progress: 409,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<components['schemas']['ErrorCode'], number>;

/** An error code this server emits. Clients must tolerate others (design §12). */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** One entry of `details.field_violations` (design §9, AIP-193 style). */
export interface FieldViolation {
  field: string;
  description: string;
}

/** The published error envelope (conventions §7). */
export interface ErrorEnvelope {
  error: { code: string; message: string; details: Record<string, unknown>; request_id: string };
}

export interface ApiErrorOptions {
  details?: Record<string, unknown>;
  /** Response headers that belong to this error, e.g. `Retry-After`, `WWW-Authenticate`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The base of every failure that becomes an HTTP error response. `message` is written for the
 * client and must never contain SQL, stack traces or secrets; put the underlying error in `cause`
 * (logged, never sent). Families extend it: `AuthError`, `IdempotencyError`, `RateLimitError`,
 * `ComputerStateError`.
 *
 * @example
 * throw new ApiError('not_found', 'no computer named web-1 in this workspace');
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;
  /** Set by the HTTP layer when the error is answered, so logs and the envelope agree. */
  requestId: string | undefined;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  /**
   * The published envelope for this error.
   *
   * @example
   * new ApiError('not_found', 'no such computer').toEnvelope('req1');
   * // { error: { code: 'not_found', message: 'no such computer', details: {}, request_id: 'req1' } }
   */
  toEnvelope(requestId: string): ErrorEnvelope {
    return {
      error: { code: this.code, message: this.message, details: this.details, request_id: requestId },
    };
  }
}

/**
 * A 400 `invalid_argument` with `details.field_violations`.
 *
 * @example
 * throw invalidArgument([{ field: 'name', description: 'has the form of an id' }]);
 */
export function invalidArgument(
  violations: FieldViolation[],
  message = 'one or more fields are invalid',
): ApiError {
  return new ApiError('invalid_argument', message, { details: { field_violations: violations } });
}

/**
 * What means "try again": serialization failure and deadlock; a bound that ran out (a lock waited
 * past `lock_timeout`, a statement past `statement_timeout`, a transaction idle past its timeout, no
 * pooled connection free in time); and the server going away.
 */
const RETRYABLE_SQLSTATE = new Set([
  '40001',
  '40P01',
  '55P03',
  '57014',
  '25P03',
  'svc_pool_timeout',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/**
 * Turns anything thrown into an `ApiError`. Known database conditions map to their API codes
 * (unique violation → 409 `already_exists`; deadlock, serialization failure or a lost connection →
 * 503 `unavailable`); everything else is a 500 `internal` whose message says nothing about the cause.
 *
 * @example
 * const apiError = toApiError(new Error('boom')); // code 'internal', message 'internal error'
 */
export function toApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  const code =
    typeof thrown === 'object' && thrown !== null ? (thrown as { code?: unknown }).code : undefined;
  if (code === '23505')
    return new ApiError('already_exists', 'a resource with that name already exists', { cause: thrown });
  if (typeof code === 'string' && (RETRYABLE_SQLSTATE.has(code) || NETWORK_CODES.has(code))) {
    return new ApiError('unavailable', 'the service is briefly unavailable; retry shortly', {
      headers: { 'retry-after': '1' },
      cause: thrown,
    });
  }
  return new ApiError('internal', 'internal error', { cause: thrown });
}

/**
 * A web-standard error `Response` in the published envelope, with the error's own headers and
 * `Request-Id`. The HTTP layer may build its own; this is the one place that knows the shape.
 *
 * @example
 * const response = errorResponse(new Error('boom'), 'req1'); // 500, {"error":{"code":"internal",…}}
 */
export function errorResponse(
  thrown: unknown,
  requestId: string,
  headers: Record<string, string> = {},
): Response {
  const error = toApiError(thrown);
  error.requestId = requestId;
  return new Response(JSON.stringify(error.toEnvelope(requestId)), {
    status: error.status,
    headers: { ...headers, ...error.headers, 'content-type': 'application/json', 'request-id': requestId },
  });
}
