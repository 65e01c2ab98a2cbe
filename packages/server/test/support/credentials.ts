// Forged and refused credentials, shared by the unit tests of authentication and the HTTP attack suite.
import { randomBytes, scryptSync } from 'node:crypto';
import { importPKCS8, SignJWT } from 'jose';
import { expect } from 'vitest';
import { AuthError, type AuthFailure } from '../../src/identity/auth/errors.js';
import type { KeyFile } from '../../src/identity/auth/keypair.js';
import { usernameOf } from '../../src/identity/signin/accounts.js';
import type { Queryable } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';

/** The claims of a valid service-account assertion of `file` for `tokenUrl` (as `signAssertion` sets them). */
export function assertionClaims(file: KeyFile, tokenUrl: string): Record<string, unknown> {
  const iat = Math.floor(Date.now() / 1000);
  return { iss: file.principal_id, sub: file.principal_id, aud: tokenUrl, iat, exp: iat + 300, jti: newId() };
}

/**
 * An assertion for `tokenUrl` with any header and claims we like, signed with `file`'s private key:
 * valid unless `claims` or `header` say otherwise.
 *
 * @example
 * const stale = await craftAssertion(TOKEN_URL, file, { exp: 1 });
 */
export async function craftAssertion(
  tokenUrl: string,
  file: KeyFile,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const key = await importPKCS8(file.private_key, file.algorithm);
  return new SignJWT({ ...assertionClaims(file, tokenUrl), ...claims })
    .setProtectedHeader({ alg: file.algorithm, kid: file.key_id, typ: 'JWT', ...header } as { alg: string })
    .sign(key);
}

/** `'accepted'`, or the reason of the 401 `unauthenticated` the promise was refused with (anything else throws). */
export async function refusalReason(promise: Promise<unknown>): Promise<AuthFailure | 'accepted'> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    expect([error.status, error.code]).toEqual([401, 'unauthenticated']);
    return error.reason;
  }
}

/**
 * Stores `password` for the local account of `email` as a scrypt hash of low cost (N = 2^10), in the
 * format the server stores (its parameters travel with the hash), so that a test of what surrounds
 * the check (throttles, pages, redirects) does not spend a production hash's 100 ms of CPU per guess.
 * The production cost itself is measured where it matters (test/security/anonymous-work.test.ts).
 *
 * @example
 * await setLocalAccount(db, { email, password });
 * await cheapenPassword(db, email, password);
 */
export async function cheapenPassword(db: Queryable, email: string, password: string): Promise<void> {
  const salt = randomBytes(16);
  const [n, r, p] = [2 ** 10, 8, 1];
  const hash = scryptSync(password.normalize('NFC'), salt, 32, { N: n, r, p });
  const stored = ['scrypt', n, r, p, salt.toString('base64url'), hash.toString('base64url')].join('$');
  const { rowCount } = await db.query('UPDATE local_accounts SET password_hash = $1 WHERE username = $2', [
    stored,
    usernameOf(email),
  ]);
  if (rowCount !== 1) throw new Error(`no local account for ${email}`);
}
