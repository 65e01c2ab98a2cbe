// Which webhook receiver a server run can use. The delivery checks need the server to reach a receiver
// of the suite's own, which listens on 127.0.0.1; a server as shipped refuses a loopback receiver URL
// (`400 invalid_argument` on `url`, the spec's WebhookUrl: "Its host must not be, nor resolve to, a
// private, loopback, link-local, or metadata address"). So a run may name a public URL that forwards to
// the receiver's port (`pnpm contract --webhook-receiver-url URL --webhook-receiver-port PORT`, a tunnel
// or a TLS proxy); when the server accepts none, the checks that need a delivery report themselves
// skipped, with the server's own answer and what enables them.
import { deref, listOperations, requestBody } from '@svc/contract';
import { document } from './spec-index.js';

/** `--webhook-receiver-url`: a URL the server accepts whose requests reach the receiver's port. */
export const RECEIVER_URL = process.env.CONTRACT_WEBHOOK_RECEIVER_URL || undefined;

/** `--webhook-receiver-port`: where the receiver listens on 127.0.0.1 (0: any free port). */
export const RECEIVER_PORT = Number(process.env.CONTRACT_WEBHOOK_RECEIVER_PORT || 0);

/**
 * The spec's own example of a receiver URL (an https URL of a public name), read from the create
 * request's `url`: the endpoints' operations are checked on it when no receiver is usable. A server
 * that follows the spec accepts it; deliveries to it fail, and are not checked.
 */
export const SPEC_RECEIVER_URL: string = (() => {
  const create = listOperations(document).find((op) => op.operationId === 'createWebhookEndpoint');
  const schema = create && requestBody(document, create)?.schema;
  const url = schema && deref(document, (deref(document, schema).properties as Record<string, unknown>).url);
  const example = (url?.examples as unknown[] | undefined)?.[0];
  if (typeof example !== 'string') throw new Error('the spec gives no example of a webhook receiver URL');
  return example;
})();

/**
 * What a refusal of a receiver URL says, from the server's answer: the `url` field violation of a
 * `400 invalid_argument`; undefined for any other answer (which the test then judges as it is).
 *
 * @example
 * urlRefusal(400, { error: { code: 'invalid_argument', details: { field_violations: [{ field: 'url', description: 'must use https' }] } } });
 * // '400 invalid_argument, url: must use https'
 */
export function urlRefusal(status: number, body: unknown): string | undefined {
  const error = (body as { error?: { code?: string; details?: { field_violations?: unknown } } } | undefined)
    ?.error;
  if (status !== 400 || error?.code !== 'invalid_argument') return undefined;
  const violations = Array.isArray(error.details?.field_violations)
    ? (error.details.field_violations as { field?: string; description?: string }[])
    : [];
  const url = violations.find((v) => v.field === 'url');
  return url ? `400 invalid_argument, url: ${url.description}` : undefined;
}

/** What the webhooks suite learned: the receiver URL the server accepted, or why it has none. */
export const receivers: { usable?: string; unusable?: string } = {};

/** The reason a check that needs a delivery is skipped: the server's refusal, and what enables it. */
export function noReceiver(url: string, refusal: string): string {
  return (
    `no webhook receiver the server accepts: it refused ${url} (${refusal}). To check deliveries, start ` +
    'the server with SVC_WEBHOOKS_ALLOW_LOOPBACK=true (development only), or give pnpm contract ' +
    '--webhook-receiver-url <a URL the server accepts> --webhook-receiver-port <the local port it forwards to>'
  );
}

/**
 * A receiver URL for the write-back suite, new on every call (an update must change it): under the
 * receiver URL the server accepted, else under the spec's example. Nothing needs to answer it.
 */
export function writeBackUrl(n: number): string {
  return `${(receivers.usable ?? SPEC_RECEIVER_URL).replace(/\/+$/, '')}/write-back/${n}`;
}
