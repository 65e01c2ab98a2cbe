import { newId } from './ids.js';

/**
 * A new request id: the service's own id format (design §1: 27 characters of lowercase Crockford
 * base32, time-sortable), minted by `./ids.ts` so request ids and resource ids never diverge.
 * Never taken from the client: a `Request-Id` header on the request is ignored.
 *
 * @example
 * const id = newRequestId(); // 27 chars, sorts by time
 */
export function newRequestId(): string {
  return newId();
}
