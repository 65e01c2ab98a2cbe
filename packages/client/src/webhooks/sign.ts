import { hmac, SECRET_PREFIX, secretKey, signedContent, toBase64 } from './signature.js';

/**
 * The Standard Webhooks headers of one delivery.
 *
 * @example
 * import type { SignedWebhookHeaders } from '@svc/client/webhooks';
 * const id = (h: SignedWebhookHeaders) => h['webhook-id'];
 */
export type SignedWebhookHeaders = Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>;

/**
 * Signs a delivery as the service does: `webhook-id` (the event id), `webhook-timestamp` (`at`, in
 * seconds) and `webhook-signature`, one `v1,<base64 HMAC-SHA256>` per secret, space-separated. For
 * senders that stand in for the service (`svc listen`) and for tests of a receiver.
 *
 * @example
 * import { signWebhook } from '@svc/client/webhooks';
 * const body = JSON.stringify(event);
 * const headers = await signWebhook({ id: event.id, body, secrets: 'whsec_…' });
 * declare const event: { id: string };
 */
export async function signWebhook(input: {
  id: string;
  body: string | Uint8Array;
  secrets: string | readonly string[];
  at?: Date;
}): Promise<SignedWebhookHeaders> {
  const timestamp = String(Math.floor((input.at ?? new Date()).getTime() / 1000));
  const content = signedContent(input.id, timestamp, input.body);
  const secrets = typeof input.secrets === 'string' ? [input.secrets] : input.secrets;
  const signatures: string[] = [];
  for (const secret of secrets)
    signatures.push(`v1,${toBase64(await hmac(await secretKey(secret), content))}`);
  return {
    'webhook-id': input.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.join(' '),
  };
}

/**
 * A new webhook secret as the service makes them: `whsec_` and base64 of 32 random bytes.
 *
 * @example
 * import { generateWebhookSecret } from '@svc/client/webhooks';
 * generateWebhookSecret(); // 'whsec_…'
 */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}
