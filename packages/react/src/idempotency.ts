import { ApiError, NetworkError } from '@svc/client';

/**
 * `init` with an `Idempotency-Key` header, made once per call: the hooks add it before TanStack Query
 * sees the variables, so every retry of the call (TanStack's, or the client's own) sends the same key,
 * and a second `mutate()` sends a new one. A key the caller passed is kept.
 *
 * @example
 * import { withIdempotencyKey } from '@svc/react';
 * const init = withIdempotencyKey({ body: { name: 'box' } }, () => crypto.randomUUID());
 * init.params.header['Idempotency-Key']; // a UUID
 */
export function withIdempotencyKey<Init>(
  init: Init,
  makeKey: () => string,
): Init & { params: { header: { 'Idempotency-Key': string } } } {
  const given = (init ?? {}) as { params?: { header?: Record<string, unknown> } };
  const params = given.params ?? {};
  const header = params.header ?? {};
  const key = typeof header['Idempotency-Key'] === 'string' ? header['Idempotency-Key'] : makeKey();
  return { ...given, params: { ...params, header: { ...header, 'Idempotency-Key': key } } } as Init & {
    params: { header: { 'Idempotency-Key': string } };
  };
}

/** Most attempts of one call, the first included, under {@link shouldRetry}. */
export const MAX_ATTEMPTS = 4;

/**
 * Whether a failed call may be tried again: no response came (`NetworkError`), or the server said to
 * come back (429, 503, or 409 `idempotency_key_in_use` while the first request with the key runs).
 * Safe for mutations because each carries its `Idempotency-Key` across attempts. The hooks use it as
 * TanStack Query's `retry` unless you pass your own.
 *
 * @example
 * import { shouldRetry } from '@svc/react';
 * import { QueryClient } from '@tanstack/react-query';
 * const queryClient = new QueryClient({ defaultOptions: { queries: { retry: shouldRetry } } });
 */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (failureCount >= MAX_ATTEMPTS - 1) return false;
  if (error instanceof NetworkError) return true;
  if (!(error instanceof ApiError)) return false;
  return error.status === 429 || error.status === 503 || error.code === 'idempotency_key_in_use';
}

/**
 * How long to wait before attempt `failureCount + 1`: what the server asked (`Retry-After`), else
 * exponential from 250 ms with full jitter, at most 30 s.
 *
 * @example
 * import { retryDelay } from '@svc/react';
 * retryDelay(1, new Error('x')); // between 0 and 500
 */
export function retryDelay(failureCount: number, error: unknown): number {
  const asked = error instanceof ApiError ? error.retryAfterMs : undefined;
  if (asked !== undefined) return Math.min(asked, 30_000);
  return Math.random() * Math.min(30_000, 250 * 2 ** failureCount);
}
