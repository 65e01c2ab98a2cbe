// Webhooks entry (`@svc/client/webhooks`): verify a delivery the service sent (Standard Webhooks), and
// sign one as it does. Browser-safe (WebCrypto only); kept apart so an app that calls the API only does
// not bundle it.
export type { WebhookEvent, WebhookEventType, WebhookHeaders } from '@svc/contract';
export { generateWebhookSecret, type SignedWebhookHeaders, signWebhook } from './webhooks/sign.js';
export {
  type AnyWebhookEvent,
  type VerifyWebhookOptions,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhooks/verify.js';
