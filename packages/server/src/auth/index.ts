export type { AccessTokenClaims, AccessTokenOptions, IssuedToken } from './access-token.js';
export { ACCESS_TOKEN_TTL_SECONDS, ACCESS_TOKEN_TYPE, AccessTokens } from './access-token.js';
export type { AssertionOptions, VerifiedAssertion } from './assertion.js';
export {
  MAX_ASSERTION_LIFETIME_SECONDS,
  purgeExpiredJtis,
  signAssertion,
  verifyAssertion,
} from './assertion.js';
export type { Principal } from './authenticate.js';
export { authenticate, bearerToken } from './authenticate.js';
export type { AuthFailure } from './errors.js';
export { AuthError } from './errors.js';
export { CLOCK_SKEW_SECONDS, MAX_TOKEN_BYTES } from './jose-errors.js';
export type { GeneratedKeyPair, KeyAlgorithm, KeyFile } from './keypair.js';
export { generateServiceAccountKey, KEY_ALGORITHMS, keyFile, writeKeyFile } from './keypair.js';
export { hashPassword, verifyPassword } from './password.js';
export type { SigningKey } from './signing-keys.js';
export { ServerKeys } from './signing-keys.js';
