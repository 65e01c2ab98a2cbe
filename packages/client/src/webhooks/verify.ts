import type { WebhookEvent, WebhookEventType } from '@svc/contract';
import { constantTimeEqual, fromBase64, hmac, secretKey, signedContent } from './signature.js';

/**
 * Why a delivery was refused: a Standard Webhooks header absent (or not of its form), no signature
 * matching a secret, a timestamp outside the tolerance (a replay), or a body that is not an event.
 */
export type WebhookVerificationReason =
  | 'missing_header'
  | 'bad_signature'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'bad_payload';

/**
 * A delivery {@link verifyWebhook} refused; `reason` says why. Answer it with a 4xx and do not act on it.
 *
 * @example
 * import { WebhookVerificationError } from '@svc/client/webhooks';
 * const status = (err: unknown) => (err instanceof WebhookVerificationError ? 400 : 500);
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A verified delivery's event: one of the spec's webhook payloads, told apart by `type`
 * (`WebhookEvent<'computer.created'>` when `type` is `computer.created`).
 *
 * @example
 * import type { AnyWebhookEvent } from '@svc/client/webhooks';
 * const name = (e: AnyWebhookEvent) => (e.type === 'computer.created' ? e.computer.name : e.type);
 */
export type AnyWebhookEvent = {
  [T in WebhookEventType]: Omit<WebhookEvent<T>, 'type'> & { type: T };
}[WebhookEventType];

/**
 * The tolerance of the spec (`webhook-timestamp`): 5 minutes either way of the receiver's clock.
 *
 * @example
 * import { WEBHOOK_TOLERANCE_SECONDS } from '@svc/client/webhooks';
 * WEBHOOK_TOLERANCE_SECONDS; // 300
 */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * What {@link verifyWebhook} takes.
 *
 * @example
 * import type { VerifyWebhookOptions } from '@svc/client/webhooks';
 * const options: VerifyWebhookOptions = { secrets: ['whsec_new…', 'whsec_old…'], headers: {}, body: '{}' };
 */
export interface VerifyWebhookOptions {
  /** The endpoint's secret (`whsec_…`), or both during a rotation's overlap: any may match. */
  secrets: string | readonly string[];
  /** The request's headers (`Request.headers`, or a plain object such as Node's `req.headers`). */
  headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The body exactly as received (not parsed and serialized again). */
  body: string | Uint8Array;
  /** How far `webhook-timestamp` may be from now, in seconds. Default 300 (the spec's 5 minutes). */
  toleranceSeconds?: number;
  /** The receiver's clock. Default: now. */
  now?: Date;
}

function header(headers: VerifyWebhookOptions['headers'], name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers))
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.join(' ');
  return undefined;
}

function required(headers: VerifyWebhookOptions['headers'], name: string, form: RegExp): string {
  const value = header(headers, name);
  if (value === undefined || !form.test(value))
    throw new WebhookVerificationError(
      'missing_header',
      value === undefined ? `no ${name} header` : `${name} is not of its form`,
    );
  return value;
}

function parseEvent(body: string | Uint8Array, id: string): AnyWebhookEvent {
  let event: unknown;
  try {
    const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body);
    event = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('bad_payload', 'the body is not JSON');
  }
  const e = event as Record<string, unknown> | null;
  if (
    typeof e !== 'object' ||
    e === null ||
    Array.isArray(e) ||
    typeof e.type !== 'string' ||
    typeof e.sequence !== 'number' ||
    typeof e.workspace_id !== 'string' ||
    typeof e.created_at !== 'string'
  )
    throw new WebhookVerificationError('bad_payload', 'the body is not a workspace event');
  if (e.id !== id) throw new WebhookVerificationError('bad_payload', "the body's id is not webhook-id");
  return event as AnyWebhookEvent;
}

/**
 * Verifies a delivery the Standard Webhooks way and returns its event, parsed and typed; throws
 * {@link WebhookVerificationError} otherwise. Checks, in this order: the three headers are there;
 * `webhook-timestamp` is within `toleranceSeconds` (5 minutes) of `now` (`timestamp_too_old`,
 * `timestamp_too_new`: a replay); one `v1,` signature of `webhook-signature` is the HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` under one of `secrets` (compared in constant time; pass the
 * old and the new secret during a rotation); the body is a workspace event whose `id` is `webhook-id`.
 * Browser-safe (WebCrypto). Deduplicate by the event's `id` and order by its `sequence`: an event may
 * come twice, and a retry after a later event.
 *
 * @example
 * import { verifyWebhook } from '@svc/client/webhooks';
 * export async function POST(request: Request): Promise<Response> {
 *   const body = await request.text();
 *   const event = await verifyWebhook({ secrets: 'whsec_…', headers: request.headers, body });
 *   if (event.type === 'computer.created') console.log(event.computer.name);
 *   return new Response(null, { status: 204 });
 * }
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<AnyWebhookEvent> {
  const { headers, body } = options;
  const id = required(headers, 'webhook-id', /^\S+$/);
  const timestamp = required(headers, 'webhook-timestamp', /^[0-9]{1,12}$/);
  const signatures = required(headers, 'webhook-signature', /\S/).split(' ');
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const at = Number(timestamp);
  if (now - at > tolerance)
    throw new WebhookVerificationError('timestamp_too_old', `webhook-timestamp is over ${tolerance} s old`);
  if (at - now > tolerance)
    throw new WebhookVerificationError('timestamp_too_new', `webhook-timestamp is over ${tolerance} s ahead`);
  const given = signatures
    .filter((s) => s.startsWith('v1,'))
    .map((s) => fromBase64(s.slice(3)))
    .filter((s): s is Uint8Array => s !== undefined);
  const content = signedContent(id, timestamp, body);
  const secrets = typeof options.secrets === 'string' ? [options.secrets] : options.secrets;
  let matched = false;
  for (const secret of secrets) {
    const expected = await hmac(await secretKey(secret), content);
    for (const signature of given) if (constantTimeEqual(expected, signature)) matched = true;
  }
  if (!matched)
    throw new WebhookVerificationError('bad_signature', 'no v1 signature matches the secrets given');
  return parseEvent(body, id);
}
