export type { LocalAccountInput } from './accounts.js';
export {
  checkLocalPassword,
  LocalAccountError,
  MIN_PASSWORD_LENGTH,
  setLocalAccount,
  usernameOf,
} from './accounts.js';
export type { SigninAttemptsOptions } from './attempts.js';
export { SigninAttempts } from './attempts.js';
export { AUTHORIZATION_CODE_TTL_SECONDS, issueAuthorizationCode } from './codes.js';
export { CSRF_COOKIE, CSRF_FIELD } from './csrf.js';
export type { SigninDeps } from './handler.js';
export { createSigninHandler } from './handler.js';
export { s256, verifyPkce } from './pkce.js';
export { CLI_CLIENT_ID, isLoopbackRedirect, REDIRECT_PATH } from './redirect.js';
