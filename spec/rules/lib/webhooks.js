// What a webhook of the v1 contract is, for both linters: an entry of OpenAPI 3.1's `webhooks` section
// (not a path), named by a workspace event type (`computer.created`, a value of the `WorkspaceEventType`
// enum), whose `post` delivers that event's JSON (the schema the event stream's branch for the same name
// gives its `data`), signed the Standard Webhooks way (the three `webhook-*` headers).
//
//   - Redocly (redocly-plugin.js): svc/operation-id-verb holds a webhook's operationId to
//     `webhookOperationId(name)`; svc/paths-kebab-case checks path names only, never event types.
//   - Spectral (functions/webhooks.js, rule svc-webhooks, on the bundle): everything else.
//
// The JSON-API rules (envelopes, error responses, `x-svc`, Idempotency-Key, rate-limit headers) walk
// `paths` only (lib/openapi.js `operations`): a webhook is a request the service SENDS, so none of them
// applies to it.
import { isObject } from './openapi.js';
import { streamItemSchemas } from './streams.js';

/** The components schema whose enum lists the workspace event types: the names of the webhooks. */
export const EVENT_TYPE_SCHEMA = 'WorkspaceEventType';

/** The headers every delivery carries (Standard Webhooks), each a required header parameter. */
export const WEBHOOK_HEADERS = Object.freeze(['webhook-id', 'webhook-timestamp', 'webhook-signature']);

/** The only method of a webhook, and the only media type of its body. */
export const WEBHOOK_METHOD = 'post';
export const WEBHOOK_MEDIA_TYPE = 'application/json';

/** The only response key of a webhook: any 2xx acknowledges a delivery. */
export const WEBHOOK_RESPONSE = '2XX';

/** What a webhook's operationId ends with, after its camelCased event type. */
export const WEBHOOK_SUFFIX = 'Webhook';

/**
 * The operationId of the webhook for an event type: its words camelCased, then `Webhook`.
 *
 * @param {string} name an event type, `service_account.created`
 * @returns {string} `serviceAccountCreatedWebhook`
 */
export function webhookOperationId(name) {
  const words = String(name)
    .split(/[._-]+/)
    .filter((w) => w !== '');
  return (
    words
      .map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase()))
      .join('') + WEBHOOK_SUFFIX
  );
}

/** The workspace event types of a resolved document (the `WorkspaceEventType` enum), or undefined. */
export function eventTypes(doc) {
  const values = doc?.components?.schemas?.[EVENT_TYPE_SCHEMA]?.enum;
  return Array.isArray(values) ? values.filter((v) => typeof v === 'string') : undefined;
}

/**
 * The data schema each event name has in the event streams of a resolved document: for every `oneOf`
 * branch of a stream's item schema, each name it gives `event` (`const` or `enum`) mapped to the schema
 * object of its `data.contentSchema` (Spectral's resolved document shares it with `components`).
 *
 * @returns {Map<string, object>}
 */
export function streamDataSchemas(doc) {
  const byName = new Map();
  for (const item of streamItemSchemas(doc)) {
    for (const branch of Array.isArray(item.oneOf) ? item.oneOf : []) {
      const event = branch?.properties?.event;
      const content = branch?.properties?.data?.contentSchema;
      if (!isObject(event) || !isObject(content)) continue;
      const names =
        typeof event.const === 'string' ? [event.const] : Array.isArray(event.enum) ? event.enum : [];
      for (const name of names) if (!byName.has(name)) byName.set(name, content);
    }
  }
  return byName;
}
