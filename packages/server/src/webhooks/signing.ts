import { Webhook } from 'standardwebhooks';

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the event id, the receiver's
 * deduplication key), `webhook-timestamp` (now, in seconds) and `webhook-signature`, one `v1,<sig>`
 * per secret, separated by a space (the current one first; the previous one too during a rotation's
 * overlap), signed by `standardwebhooks`' own `Webhook.sign`.
 *
 * @example
 * const headers = signedHeaders({ id: event.id, body, at: new Date(), secrets: [secret] });
 */
export function signedHeaders(input: {
  id: string;
  body: string;
  at: Date;
  secrets: readonly string[];
}): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const signatures = input.secrets.map((secret) => new Webhook(secret).sign(input.id, input.at, input.body));
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
