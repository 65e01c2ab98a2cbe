// Several server instances on one PostgreSQL database, called as a load balancer would: through each
// app's fetch, with a bearer token (and a fresh Idempotency-Key for a POST).
import type { App } from '../../src/compose/app.js';
import { loadConfig } from '../../src/compose/config.js';
import { newId } from '../../src/platform/ids.js';
import { type Answer, ORIGIN } from './app.js';

/** The configuration every replica of these tests shares: no rate limits, quick simulated steps. */
export const replicaConfig = loadConfig(
  { SVC_BASE_URL: `${ORIGIN}/v1`, SVC_RATE_LIMITS: 'off', SVC_SIM_STEP_MS: '10' },
  { sandbox: true },
);

/**
 * One request to one replica; the body is parsed JSON (or undefined when empty), `text` as it came.
 *
 * @example
 * const me = await callReplica(two, 'GET', '/v1/me', token);
 */
export async function callReplica(
  app: App,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Pick<Answer, 'status' | 'body'> & { text: string }> {
  const response = await app.fetch(
    new Request(`${ORIGIN}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(method === 'POST' ? { 'idempotency-key': newId() } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
}
