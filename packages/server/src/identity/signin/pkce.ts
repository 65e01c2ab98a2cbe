import { createHash } from 'node:crypto';
import { safeEqual } from './secrets.js';

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. Challenges (S256) are always 43. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;
const S256_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The S256 challenge of a verifier: `BASE64URL(SHA256(ASCII(verifier)))` (RFC 7636 §4.2).
 *
 * @example
 * s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'); // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
 */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * Whether `challenge` has the shape of an S256 challenge (43 base64url characters).
 *
 * @example
 * isS256Challenge('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'); // true
 */
export function isS256Challenge(challenge: string): boolean {
  return S256_CHALLENGE_PATTERN.test(challenge);
}

/**
 * Checks a verifier against a stored S256 challenge, in constant time. `plain` is never accepted.
 *
 * @example
 * verifyPkce(verifier, storedChallenge); // true when s256(verifier) === storedChallenge
 */
export function verifyPkce(verifier: string, challenge: string): boolean {
  return CODE_VERIFIER_PATTERN.test(verifier) && safeEqual(s256(verifier), challenge);
}
