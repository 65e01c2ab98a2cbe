import type { OpenApiDocument } from './document.js';

/** A JSON object of the document (a schema, parameter, response, header, …) held as plain data. */
export type JsonObject = Record<string, unknown>;

/** How many `$ref` hops `deref` follows before it calls the chain a cycle; the spec needs two at most. */
const MAX_HOPS = 32;

/**
 * What a local reference (`#/components/schemas/Computer`, a JSON pointer with `~1` and `~0` escapes)
 * points to. Only references into the document itself: the bundle has no others.
 *
 * @example
 * import { loadDocument, resolveRef } from '@svc/contract';
 * const computer = resolveRef(loadDocument(), '#/components/schemas/Computer');
 */
export function resolveRef(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = node !== null && typeof node === 'object' ? (node as JsonObject)[key] : undefined;
    if (node === undefined) throw new Error(`unresolvable $ref ${ref}`);
  }
  return node;
}

/**
 * Follows `$ref`s from `value` until an object without one, and says where it ended: `ref` is the last
 * reference followed (undefined when `value` had none). Keywords beside a `$ref` (OpenAPI 3.1 allows
 * `description` and `summary` there) are laid over the target's.
 *
 * @example
 * import { derefWithRef, loadDocument } from '@svc/contract';
 * derefWithRef(loadDocument(), { $ref: '#/components/responses/NotFound' }).ref; // '#/components/responses/NotFound'
 */
export function derefWithRef<T extends JsonObject = JsonObject>(
  document: OpenApiDocument,
  value: unknown,
): { value: T; ref: string | undefined } {
  let current = value as JsonObject;
  let ref: string | undefined;
  const chain: string[] = [];
  while (current !== null && typeof current === 'object' && typeof current.$ref === 'string') {
    ref = current.$ref;
    if (chain.length >= MAX_HOPS || chain.includes(ref))
      throw new Error(`$ref cycle: ${[...chain, ref].join(' -> ')}`);
    chain.push(ref);
    const { $ref: _, ...own } = current;
    const target = resolveRef(document, ref) as JsonObject;
    current = Object.keys(own).length === 0 ? target : { ...target, ...own };
  }
  return { value: current as T, ref };
}

/**
 * `value` with its `$ref`s followed (see {@link derefWithRef}); nested references stay as they are.
 * For a parameter, request body, response, header or the top of a schema.
 *
 * @example
 * import { deref, loadDocument } from '@svc/contract';
 * deref(loadDocument(), { $ref: '#/components/schemas/Role' }).enum; // ['owner', 'admin', 'editor', 'viewer']
 */
export function deref<T extends JsonObject = JsonObject>(document: OpenApiDocument, value: unknown): T {
  return derefWithRef<T>(document, value).value;
}
