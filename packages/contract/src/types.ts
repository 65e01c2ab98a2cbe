import type { components, operationPolicies, operations, securityRequirements } from './generated/schema.js';

/** The operationIds of the spec, as a string union. */
export type OperationId = keyof operations;

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
