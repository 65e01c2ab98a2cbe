export type { App, AppOptions, ResponseValidation } from './app.js';
export { createApp } from './app.js';
export type {
  AccessTokenClaims,
  AuthFailure,
  IssuedToken,
  KeyAlgorithm,
  KeyFile,
  Principal,
  VerifiedAssertion,
} from './auth/index.js';
export {
  AccessTokens,
  AuthError,
  authenticate,
  bearerToken,
  generateServiceAccountKey,
  keyFile,
  ServerKeys,
  signAssertion,
  verifyAssertion,
  writeKeyFile,
} from './auth/index.js';
export type { BootstrapOptions, BootstrapResult } from './bootstrap.js';
export { BootstrapError, bootstrap, bootstrapMessage } from './bootstrap.js';
export type { Config, Quotas } from './config.js';
export { ConfigError, loadConfig } from './config.js';
export type { Database, Queryable, QueryResult } from './db/index.js';
export { migrate, openDatabase } from './db/index.js';
export type { ErrorCode, ErrorEnvelope, FieldViolation } from './errors.js';
export { ApiError, ERROR_STATUS, errorResponse, invalidArgument, toApiError } from './errors.js';
export type { ComputerFiles, FileErrorReason, FileStat, FileType, WriteOptions } from './files/index.js';
export { FileError, normalizeComputerPath } from './files/index.js';
export type { Handler, Handlers } from './handlers/types.js';
export { housekeeping } from './housekeeping.js';
export type { RunningServer } from './http/node-adapter.js';
export { listen } from './http/node-adapter.js';
export type { IdempotencyScope, IdempotentOutcome, StoredResponse } from './idempotency.js';
export { IdempotencyError, requestFingerprint, runIdempotent } from './idempotency.js';
export { idTime, isId, isName, newId } from './ids.js';
export type { ComputerDriver } from './operations/index.js';
export {
  ComputerStateError,
  createComputerRecord,
  DriverError,
  OperationEvents,
  OperationWorker,
  requestComputerAction,
  SimulatedDriver,
  waitForOperation,
} from './operations/index.js';
export { Cursors } from './paging.js';
export type { RateLimitPolicies, RateLimitState } from './ratelimit.js';
export {
  DEFAULT_RATE_LIMITS,
  parseRateLimits,
  RateLimitError,
  RateLimiter,
  rateLimitHeaders,
} from './ratelimit.js';
export type { Counter, CounterState } from './ratelimit-counter.js';
export type { CounterOptions, CounterStore } from './ratelimit-store.js';
export { counterStore, memoryCounters } from './ratelimit-store.js';
export type { ComputerRow } from './repositories/computers.js';
export type { OperationRow } from './repositories/operations.js';
export { seedSandbox } from './sandbox.js';
export type { LocalAccountInput } from './signin/index.js';
export { createSigninHandler, setLocalAccount } from './signin/index.js';
