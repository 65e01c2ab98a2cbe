import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A new opaque secret (authorization code, refresh token, CSRF nonce): 32 random bytes, base64url
 * (43 characters, within the spec's `refresh_token` pattern `^[A-Za-z0-9_-]+$`).
 *
 * @example
 * const code = newSecret(); // 'q3Zr…' (43 chars)
 */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * What the database stores instead of a secret: SHA-256, hex. The secrets carry 256 random bits, so a
 * plain (unsalted, fast) hash is enough: nothing to brute-force, and lookups stay one index probe.
 *
 * @example
 * const codeHash = hashSecret(code);
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * Constant-time string comparison (false for different lengths).
 *
 * @example
 * safeEqual(formToken, expected); // true | false
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
