// The webhooks of the spec, read one way: the OpenAPI 3.1 `webhooks` section holds one entry per
// workspace event type, whose `post` is what the service sends an endpoint: a JSON body of the same
// components schema the event stream gives that event's `data`, and the Standard Webhooks headers.
// scripts/generate.mjs walks the same section to type `WebhookEvent<T>` and list `webhookEventTypes`.
import type { OpenApiDocument } from './document.js';
import type { Parameter } from './reader.js';
import { deref, type JsonObject } from './refs.js';

/** The media type of a delivery's body. */
export const WEBHOOK_MEDIA_TYPE = 'application/json';

/** The schema of a webhook's payload: the components schema its body names. */
export interface WebhookPayload {
  /** The name of the components schema (`ComputerEvent`). */
  schema: string;
  /** The local reference to it (`#/components/schemas/ComputerEvent`). */
  ref: string;
}

/**
 * The names of the webhooks (event types), in spec order.
 *
 * @example
 * import { loadDocument, webhookNames } from '@svc/contract';
 * webhookNames(loadDocument()); // ['workspace.updated', 'computer.created', …]
 */
export function webhookNames(document: OpenApiDocument): string[] {
  const section = document.webhooks;
  return section !== null && typeof section === 'object' ? Object.keys(section) : [];
}

/**
 * The `post` operation of a webhook, `$ref`s followed; throws for a name the document does not have.
 *
 * @example
 * import { loadDocument, webhookOperation } from '@svc/contract';
 * webhookOperation(loadDocument(), 'computer.created').operationId; // 'computerCreatedWebhook'
 */
export function webhookOperation(document: OpenApiDocument, name: string): JsonObject {
  const section = (document.webhooks ?? {}) as Record<string, unknown>;
  if (!Object.hasOwn(section, name)) throw new Error(`no webhook ${name} in the document`);
  const post = deref(document, section[name]).post;
  if (post === undefined) throw new Error(`the webhook ${name} has no post`);
  return deref(document, post);
}

/**
 * The schema of a webhook's payload (its `application/json` body, a components schema).
 *
 * @example
 * import { loadDocument, webhookPayloadSchema } from '@svc/contract';
 * webhookPayloadSchema(loadDocument(), 'computer.created').schema; // 'ComputerEvent'
 */
export function webhookPayloadSchema(document: OpenApiDocument, name: string): WebhookPayload {
  const body = deref(document, webhookOperation(document, name).requestBody ?? {});
  const content = (body.content ?? {}) as Record<string, JsonObject>;
  const ref = (content[WEBHOOK_MEDIA_TYPE]?.schema as JsonObject | undefined)?.$ref;
  const prefix = '#/components/schemas/';
  if (typeof ref !== 'string' || !ref.startsWith(prefix))
    throw new Error(`the webhook ${name}'s ${WEBHOOK_MEDIA_TYPE} body is not a components schema`);
  return { schema: ref.slice(prefix.length), ref };
}

/**
 * The header parameters of a webhook (what every delivery carries), `$ref`s followed, in spec order.
 *
 * @example
 * import { loadDocument, webhookHeaders } from '@svc/contract';
 * webhookHeaders(loadDocument(), 'computer.created').map((h) => h.name); // ['webhook-id', …]
 */
export function webhookHeaders(document: OpenApiDocument, name: string): Parameter[] {
  const parameters = (webhookOperation(document, name).parameters ?? []) as unknown[];
  return parameters.map((raw) => deref<Parameter>(document, raw)).filter((p) => p.in === 'header');
}
