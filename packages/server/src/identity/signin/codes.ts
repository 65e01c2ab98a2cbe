import type { Queryable } from '../../platform/db/database.js';
import { insertAuthorizationCode } from '../repositories/authorization-codes.js';
import { hashSecret, newSecret } from './secrets.js';

/** Authorization codes live at most this long (the brief: ≤ 60 s; RFC 6749 §4.1.2 says ≤ 10 min). */
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

/** What an authorization code was issued for, checked again when it is exchanged. */
export interface AuthorizationRequest {
  principalId: string;
  redirectUri: string;
  /** The S256 challenge; `plain` is never stored. */
  codeChallenge: string;
}

/**
 * Issues a single-use authorization code after a successful sign-in. Only its hash is stored, with
 * the redirect URI and PKCE challenge it is bound to; it expires `ttlSeconds` after the database's
 * `now()` (one clock for all replicas).
 *
 * @example
 * const code = await issueAuthorizationCode(db, { principalId, redirectUri, codeChallenge });
 */
export async function issueAuthorizationCode(
  db: Queryable,
  request: AuthorizationRequest,
  ttlSeconds = AUTHORIZATION_CODE_TTL_SECONDS,
): Promise<string> {
  const code = newSecret();
  await insertAuthorizationCode(db, {
    codeHash: hashSecret(code),
    principalId: request.principalId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    ttlSeconds: Math.min(ttlSeconds, AUTHORIZATION_CODE_TTL_SECONDS),
  });
  return code;
}

/**
 * The refresh-token family started by a code, derived from the code's hash (27 hex characters, all
 * in the id alphabet): a replayed code can then revoke what its first use produced (RFC 6749
 * §4.1.2) without a column linking the two.
 *
 * @example
 * familyOfCode(hashSecret(code)); // '3f9a…' (27 chars)
 */
export function familyOfCode(codeHash: string): string {
  return codeHash.slice(0, 27);
}
