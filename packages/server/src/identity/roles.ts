import type { Schema } from '@svc/contract';

/**
 * The roles of design §8: the spec's `Role`, declared once for the whole server (the access checks,
 * the repositories' rows, rendering, the authenticated principal). A role added to the spec does not
 * compile until `access.ts` ranks it.
 *
 * @example
 * const role: Role = 'editor';
 */
export type Role = Schema<'Role'>;
