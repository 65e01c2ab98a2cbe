import { ApiError } from '../../platform/errors.js';

/** Why a credential was refused. Logged and asserted in tests; the client sees only the message. */
export type AuthFailure =
  | 'missing'
  | 'malformed'
  | 'too_large'
  | 'algorithm_not_allowed'
  | 'wrong_type'
  | 'unknown_key'
  | 'key_revoked'
  | 'key_expired'
  | 'bad_signature'
  | 'bad_claims'
  | 'expired'
  | 'not_yet_valid'
  | 'lifetime_too_long'
  | 'replayed'
  | 'principal_unknown';

/**
 * 401 `unauthenticated` (design §9) with `WWW-Authenticate: Bearer`. `reason` says which check
 * failed; the message is safe to send and never echoes the credential.
 *
 * @example
 * throw new AuthError('expired', 'the access token has expired');
 */
export class AuthError extends ApiError {
  override name = 'AuthError';
  readonly reason: AuthFailure;

  constructor(reason: AuthFailure, message: string, cause?: unknown) {
    const error = reason === 'missing' ? '' : ' error="invalid_token"';
    super('unauthenticated', message, { headers: { 'www-authenticate': `Bearer${error}` }, cause });
    this.reason = reason;
  }
}
