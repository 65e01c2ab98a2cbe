const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A request id in the service's id format (design §1: 10 chars of Unix-ms time + 17 random, lowercase
 * Crockford base32), for refusals this package answers itself. The API server should pass its own
 * minter instead (`createMcpHttpHandler({ newRequestId })`) so every id comes from one place.
 *
 * @example
 * defaultRequestId().length; // 27
 */
export function defaultRequestId(): string {
  let time = Date.now();
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const random = globalThis.crypto.getRandomValues(new Uint8Array(17));
  return head + Array.from(random, (byte) => ALPHABET[byte & 31]).join('');
}

/**
 * An HTTP refusal in the API's published error envelope `{error: {code, message, details,
 * request_id}}`, with `Request-Id` and any extra headers (`WWW-Authenticate`, `Allow`).
 *
 * @example
 * const response = refusal(401, 'unauthenticated', 'A Bearer token is required.', 'r1', { 'WWW-Authenticate': 'Bearer' });
 */
export function refusal(
  status: number,
  code: string,
  message: string,
  requestId: string,
  headers: Record<string, string> = {},
  details: Record<string, unknown> = {},
): Response {
  return new Response(JSON.stringify({ error: { code, message, details, request_id: requestId } }), {
    status,
    headers: { 'Content-Type': 'application/json', 'Request-Id': requestId, ...headers },
  });
}
