import type {
  components,
  operationPolicies,
  operations,
  securityRequirements,
  streamEvents,
} from './generated/schema.js';

/**
 * The operationIds of the spec's `paths`, as a string union. openapi-typescript also lists the
 * `webhooks` entries' operationIds in `operations`; those are requests the service sends, not
 * operations it serves, so only the ids that have security requirements (every path operation) count.
 */
export type OperationId = keyof operations & keyof securityRequirements;

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
