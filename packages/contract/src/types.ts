import type { components, operations } from './generated/schema.js';

/** The operationIds of the spec, as a string union. */
export type OperationId = keyof operations;

/** A named schema of the spec, e.g. `Schema<'Computer'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

/** The error codes the spec lists. Clients must still tolerate codes added later (design §12). */
export type ErrorCode = components['schemas'] extends { ErrorCode: infer Code } ? Code : string;
