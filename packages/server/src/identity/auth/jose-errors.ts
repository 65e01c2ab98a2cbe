import { errors } from 'jose';
import { AuthError } from './errors.js';

/**
 * Maps a `jose` verification error to the `AuthError` the caller sees. `what` names the credential
 * ("access token", "assertion") in the message.
 *
 * @example
 * try { await jwtVerify(token, key, options); } catch (error) { throw fromJoseError(error, 'assertion'); }
 */
export function fromJoseError(error: unknown, what: string): AuthError {
  if (error instanceof AuthError) return error;
  if (error instanceof errors.JWTExpired) return new AuthError('expired', `the ${what} has expired`, error);
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf' || (error.claim === 'iat' && error.reason === 'check_failed')) {
      return new AuthError('not_yet_valid', `the ${what} is not valid yet`, error);
    }
    return new AuthError('bad_claims', `the ${what} has a missing or wrong "${error.claim}" claim`, error);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new AuthError('bad_signature', `the ${what} signature does not verify`, error);
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return new AuthError('algorithm_not_allowed', `the ${what} algorithm is not allowed`, error);
  return new AuthError('malformed', `the ${what} is not a well-formed JWT`, error);
}

/** Tokens above this size are refused before any parsing (a JWT of ours is well under 1 KiB). */
export const MAX_TOKEN_BYTES = 8 * 1024;

/** Allowed clock skew between the server and token issuers (design §7). */
export const CLOCK_SKEW_SECONDS = 60;
