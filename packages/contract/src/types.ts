import type {
  components,
  operationPolicies,
  operations,
  securityRequirements,
  streamEvents,
  webhookOperations,
  webhooks,
} from './generated/schema.js';

/**
 * The operationIds of the spec's API (its `paths`), as a string union. openapi-typescript also types
 * the webhooks' operations under `operations`; they are requests the service sends, so they are left out.
 */
export type OperationId = Exclude<keyof operations, webhookOperations[keyof webhookOperations]>;

/** A named schema of the spec, e.g. `Schema<'Computer'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

/** The error codes the spec lists. Clients must still tolerate codes added later (design §12). */
export type ErrorCode = components['schemas'] extends { ErrorCode: infer Code } ? Code : string;

type KeysOf<Requirement> = Requirement extends unknown ? keyof Requirement & string : never;

/**
 * The security schemes operation `K` accepts, read from the spec (its own `security`, else the
 * document's); `never` for a public operation.
 *
 * @example
 * import type { SchemesOf } from '@svc/contract';
 * type Me = SchemesOf<'getMe'>; // 'bearerAuth'
 */
export type SchemesOf<K extends OperationId> = KeysOf<securityRequirements[K][number]>;

/**
 * The operations whose `security` is `[]`: callable without any credential.
 *
 * @example
 * import type { PublicOperationId } from '@svc/contract';
 * const probe: PublicOperationId = 'getHealth';
 */
export type PublicOperationId = {
  [K in OperationId]: securityRequirements[K] extends [] ? K : never;
}[OperationId];

/**
 * What operation `K` declares beyond its HTTP shape (its `x-svc` in the spec), as written: the
 * defaults are not filled in (read the value with `operationPolicy`).
 *
 * @example
 * import type { PolicyOf } from '@svc/contract';
 * type Exec = PolicyOf<'execComputer'>['transaction']; // 'none'
 */
export type PolicyOf<K extends OperationId> = operationPolicies[K];

/**
 * Who may call operation `K`, from its `x-svc.permission` in the spec.
 *
 * @example
 * import type { PermissionOf } from '@svc/contract';
 * const needed: PermissionOf<'execComputer'> = 'exec';
 */
export type PermissionOf<K extends OperationId> = operationPolicies[K] extends { permission: infer P }
  ? P
  : never;

/**
 * The operations that answer Server-Sent Events (a GET whose 200 is `text/event-stream`), from the spec.
 *
 * @example
 * import type { StreamOperationId } from '@svc/contract';
 * const events: StreamOperationId = 'streamWorkspaceEvents';
 */
export type StreamOperationId = keyof streamEvents;

/**
 * One event of stream operation `K`, with its `data` parsed: a union with one member per branch of the
 * stream's item schema, its `event` the names the branch gives and its `data` the schema it names.
 * Generated from the bundle (scripts/generate.mjs); an event name added later is not in it, so a client
 * skips names it does not know before narrowing.
 *
 * @example
 * import type { StreamEvent } from '@svc/contract';
 * function onEvent(e: StreamEvent<'streamWorkspaceEvents'>) {
 *   if (e.event === 'computer.created') console.log(e.data.computer.name);
 * }
 */
export type StreamEvent<K extends StreamOperationId> = streamEvents[K];

/**
 * The event types that have a webhook (the `webhooks` section), from the spec.
 *
 * @example
 * import type { WebhookEventType } from '@svc/contract';
 * const type: WebhookEventType = 'computer.created';
 */
export type WebhookEventType = keyof webhooks & string;

/**
 * The payload of webhook `T`: the JSON body the service POSTs, the same schema the event stream gives
 * the event's `data` (`WebhookEvent<'computer.created'>` is `Schema<'ComputerEvent'>`).
 *
 * @example
 * import type { WebhookEvent } from '@svc/contract';
 * function onCreated(e: WebhookEvent<'computer.created'>) {
 *   console.log(e.computer.name);
 * }
 */
export type WebhookEvent<T extends WebhookEventType> = webhooks[T] extends {
  post: { requestBody: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

/**
 * The headers of a delivery of webhook `T` (`webhook-id`, `webhook-timestamp`, `webhook-signature`, …).
 *
 * @example
 * import type { WebhookHeaders } from '@svc/contract';
 * const id = (h: WebhookHeaders<'computer.created'>) => h['webhook-id'];
 */
export type WebhookHeaders<T extends WebhookEventType> = webhooks[T] extends {
  post: { parameters: { header: infer Headers } };
}
  ? Headers
  : never;
