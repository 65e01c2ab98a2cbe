import { createHash, randomBytes } from 'node:crypto';

/**
 * A PKCE pair (RFC 7636): a 43-character verifier from 32 random bytes and its S256 challenge.
 *
 * @example
 * const { verifier, challenge } = createPkce();
 */
export function createPkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier, 'ascii').digest('base64url') };
}

/**
 * A fresh `state` value (CSRF protection of the redirect, RFC 6749 §10.12).
 *
 * @example
 * const state = newState(); // 43 base64url characters
 */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}
