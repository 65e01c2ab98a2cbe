// Retrying entry (`@svc/client/retry`): the main entry's client, plus retries with backoff. Browser-safe;
// kept apart so an app that does not retry does not bundle the loop. Everything of the main entry is
// re-exported, so one import serves.
import { buildClient, type SvcClient } from './client.js';
import type { ApiPaths } from './contract.js';
import { type RetryClientOptions, retryLoop, retrySend } from './retry.js';

export * from './index.js';
export type { RetryClientOptions } from './retry.js';

/**
 * `createClient` of `@svc/client`, plus retries: 429, 503, network errors and 409
 * `idempotency_key_in_use` are retried with full-jitter exponential backoff (default 4 attempts),
 * honouring `Retry-After`. Only safe calls are retried: GET/HEAD/OPTIONS, or a call that carries an
 * `Idempotency-Key`. `retry: false` sends each request once.
 *
 * @example
 * import { createClient, unwrap } from '@svc/client/retry';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...', retry: { maxAttempts: 6 } });
 * const { identity } = await unwrap(client.GET('/me'));
 */
export function createClient<Paths extends {} = ApiPaths>(
  options: RetryClientOptions = {},
): SvcClient<Paths> {
  return buildClient<Paths>(options, { send: retrySend(retryLoop(options)) });
}
