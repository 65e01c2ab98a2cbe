import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// scrypt parameters (RFC 7914; OWASP: N=2^17, r=8, p=1). Stored with the hash so they can change.
const N = 2 ** 17;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: 256 * n * r }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * Hashes a local account's password with scrypt: `scrypt$N$r$p$salt$hash` (base64url).
 *
 * @example
 * const stored = await hashPassword('correct horse battery staple');
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * Checks a password against a stored hash in constant time; false for any malformed hash.
 *
 * @example
 * await verifyPassword('correct horse battery staple', stored); // true
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
