/**
 * The resources a computer takes of a host: what a host's capacity is counted in, and what a quota or
 * placement refusal names. Here, below every part, because configuration (`SVC_DOCKER_CAPACITY`)
 * parses them as well as the fleet.
 */

import type { Schema } from '@svc/contract';

/**
 * A resource a host may be short of: the known values of the spec's `ErrorDetails.resource` (an open
 * enum, whose generated type also admits any string).
 */
export type Resource = Known<Exclude<Schema<'ErrorDetails'>['resource'], undefined>>;

/** The literal members of an open enum's type, without its `string & {}`. */
type Known<T> = T extends string ? (string extends T ? never : T) : never;

/** What a host has room for, and what its computers hold of it. */
export type Resources = Record<Resource, number>;

/** The resources, in the order a tie between them is named (`NoCapacity.resource`): every one of them. */
export const RESOURCES = ['vcpus', 'memory_mib', 'computers'] as const satisfies readonly Resource[];
// A resource added to the spec and not listed above fails to compile here.
const everyResource: Record<Exclude<Resource, (typeof RESOURCES)[number]>, never> = {};
void everyResource;
