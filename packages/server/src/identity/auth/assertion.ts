import type { ProtectedHeaderParameters } from 'jose';
import { decodeProtectedHeader, importJWK, importPKCS8, jwtVerify, SignJWT } from 'jose';
import type { Database } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';
import { recordJti } from '../repositories/assertion-jtis.js';
import { assertionKey } from '../repositories/keys.js';
import { ACCESS_TOKEN_TYPE } from './access-token.js';
import { AuthError } from './errors.js';
import { CLOCK_SKEW_SECONDS, fromJoseError, MAX_TOKEN_BYTES } from './jose-errors.js';
import { checkClaimTypes, checkHeaderTypes } from './jwt-shape.js';
import type { KeyFile } from './keypair.js';

/** design §7: an assertion lives at most 10 minutes (`exp − iat`). */
export const MAX_ASSERTION_LIFETIME_SECONDS = 10 * 60;

/** Who a verified assertion speaks for. */
export interface VerifiedAssertion {
  principalId: string;
  keyId: string;
}

export interface AssertionOptions {
  /** The exact token URL, `${baseUrl}/auth/token`: the only accepted `aud`. */
  tokenUrl: string;
  now?: () => number;
}

/**
 * Verifies a signed assertion (RFC 7523) for POST /auth/token, per design §7: `kid` names a stored
 * key; the algorithm is the STORED key's (`none`, `HS*` and any mismatch refused); `iss` = `sub` =
 * the key's principal; `aud` is exactly the token URL; `exp − iat` ≤ 10 min; 60 s clock skew; the
 * `jti` is recorded with `INSERT … ON CONFLICT DO NOTHING`, so a replay fails even when it races the
 * first use on another replica. Revoked and expired keys are refused; `last_used_at` is updated.
 * Access tokens (`typ: at+jwt`) are refused here. Every failure is an `AuthError`.
 *
 * @example
 * const { principalId, keyId } = await verifyAssertion(db, bearer, { tokenUrl: config.tokenUrl });
 * const token = await accessTokens.issue(principalId, { keyId });
 */
export async function verifyAssertion(
  db: Database,
  token: string,
  options: AssertionOptions,
): Promise<VerifiedAssertion> {
  const now = options.now?.() ?? Date.now();
  if (token.length > MAX_TOKEN_BYTES) throw new AuthError('too_large', 'the assertion is too large');
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch (error) {
    throw new AuthError('malformed', 'the assertion is not a well-formed JWT', error);
  }
  checkHeaderTypes(header, 'assertion');
  if (header.typ === ACCESS_TOKEN_TYPE)
    throw new AuthError('wrong_type', 'an access token cannot be exchanged for another; sign an assertion');
  if (header.typ !== undefined && header.typ.toUpperCase() !== 'JWT')
    throw new AuthError('wrong_type', 'the assertion typ must be JWT');
  if (header.alg !== 'EdDSA' && header.alg !== 'ES256')
    throw new AuthError('algorithm_not_allowed', 'the assertion must be signed with EdDSA or ES256');
  if (typeof header.kid !== 'string' || header.kid === '' || header.kid.length > 255) {
    throw new AuthError('malformed', 'the assertion header needs a kid: the key id');
  }
  const keyId = header.kid;
  const stored = await assertionKey(db, keyId);
  if (!stored) throw new AuthError('unknown_key', 'no key with that kid');
  if (stored.state !== 'active') throw new AuthError('key_revoked', 'the key has been revoked');
  if (stored.expires_at && stored.expires_at.getTime() <= now)
    throw new AuthError('key_expired', 'the key has expired');
  if (header.alg !== stored.algorithm)
    throw new AuthError('algorithm_not_allowed', `this key signs with ${stored.algorithm}`);

  let payload: Record<string, unknown>;
  try {
    const key = await importJWK(stored.public_jwk, stored.algorithm);
    ({ payload } = await jwtVerify(token, key, {
      algorithms: [stored.algorithm],
      issuer: stored.principal_id,
      subject: stored.principal_id,
      audience: options.tokenUrl,
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: new Date(now),
      requiredClaims: ['iss', 'sub', 'aud', 'iat', 'exp', 'jti'],
    }));
  } catch (error) {
    throw fromJoseError(error, 'assertion');
  }
  checkClaimTypes(payload, 'assertion');
  const { iat, exp, jti, aud } = payload as { iat: number; exp: number; jti: unknown; aud: unknown };
  if (Array.isArray(aud) && aud.length !== 1)
    throw new AuthError('bad_claims', 'the assertion aud must be exactly the token URL');
  if (exp - iat > MAX_ASSERTION_LIFETIME_SECONDS)
    throw new AuthError('lifetime_too_long', 'the assertion may live at most 10 minutes (exp - iat)');
  if (iat > now / 1000 + CLOCK_SKEW_SECONDS)
    throw new AuthError('not_yet_valid', 'the assertion was issued in the future');
  if (typeof jti !== 'string' || jti === '' || jti.length > 255)
    throw new AuthError('bad_claims', 'the assertion needs a jti of 1 to 255 characters');

  const recorded = await recordJti(db, {
    principalId: stored.principal_id,
    jti,
    expiresAt: new Date((exp + CLOCK_SKEW_SECONDS) * 1000),
    keyId,
  });
  if (!recorded) throw new AuthError('replayed', 'this assertion was already used (jti replay)');
  return { principalId: stored.principal_id, keyId };
}

/**
 * Signs an assertion with a key file's private key: what clients do before POST /auth/token.
 * The server uses it in tests and to print a first-run example.
 *
 * @example
 * const assertion = await signAssertion(file, { tokenUrl: `${file.base_url}/auth/token` });
 */
export async function signAssertion(
  file: Pick<KeyFile, 'key_id' | 'principal_id' | 'algorithm' | 'private_key'>,
  options: { tokenUrl: string; lifetimeSeconds?: number; now?: number },
): Promise<string> {
  const key = await importPKCS8(file.private_key, file.algorithm);
  const iat = Math.floor((options.now ?? Date.now()) / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: file.algorithm, kid: file.key_id, typ: 'JWT' })
    .setIssuer(file.principal_id)
    .setSubject(file.principal_id)
    .setAudience(options.tokenUrl)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.lifetimeSeconds ?? 300))
    .setJti(newId())
    .sign(key);
}
