// Forged and refused credentials, shared by the unit tests of authentication and the HTTP attack suite.
import { importPKCS8, SignJWT } from 'jose';
import { expect } from 'vitest';
import { AuthError, type AuthFailure } from '../../src/auth/errors.js';
import type { KeyFile } from '../../src/auth/keypair.js';
import { newId } from '../../src/ids.js';

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
