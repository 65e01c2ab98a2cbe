export type { App, AppOptions, ResponseValidation } from './compose/app.js';
export { createApp } from './compose/app.js';
export type { BootstrapOptions, BootstrapResult } from './compose/bootstrap.js';
export { BootstrapError, bootstrap, bootstrapMessage } from './compose/bootstrap.js';
export type { Config, Quotas } from './compose/config.js';
export { ConfigError, loadConfig } from './compose/config.js';
// The server's database: its migrations, then the event log's snapshot functions from the wire shapes.
export {
  migrateServerDatabase as migrate,
  openServerDatabase as openDatabase,
} from './compose/database.js';
export { housekeeping } from './compose/housekeeping.js';
export { seedSandbox } from './compose/sandbox.js';
export type {
  ComputerFiles,
  FileErrorReason,
  FileStat,
  FileType,
  WriteOptions,
} from './computers/files/index.js';
export { FileError, normalizeComputerPath } from './computers/files/index.js';
export type { ComputerDriver } from './computers/index.js';
export {
  ComputerStateError,
  createComputerRecord,
  DriverError,
  OperationEvents,
  OperationWorker,
  requestComputerAction,
  SimulatedDriver,
  waitForOperation,
} from './computers/index.js';
export type { ComputerRow } from './computers/repositories/computers.js';
export type { OperationRow } from './computers/repositories/operations.js';
export type { Handler, Handlers } from './handlers/types.js';
export type { RunningServer } from './http/node-adapter.js';
export { listen } from './http/node-adapter.js';
export type {
  AccessTokenClaims,
  AuthFailure,
  IssuedToken,
  KeyAlgorithm,
  KeyFile,
  Principal,
  VerifiedAssertion,
} from './identity/auth/index.js';
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
} from './identity/auth/index.js';
export type { LocalAccountInput } from './identity/signin/index.js';
export { createSigninHandler, setLocalAccount } from './identity/signin/index.js';

export type { Database, Queryable, QueryResult } from './platform/db/index.js';
export type { ErrorCode, ErrorEnvelope, FieldViolation } from './platform/errors.js';
export { ApiError, ERROR_STATUS, errorResponse, invalidArgument, toApiError } from './platform/errors.js';
export type { IdempotencyScope, IdempotentOutcome, StoredResponse } from './platform/idempotency.js';
export { IdempotencyError, requestFingerprint, runIdempotent } from './platform/idempotency.js';
export { idTime, isId, isName, newId } from './platform/ids.js';
export { Cursors } from './platform/paging.js';
export type { RateLimitPolicies, RateLimitState } from './platform/ratelimit.js';
export {
  DEFAULT_RATE_LIMITS,
  parseRateLimits,
  RateLimitError,
  RateLimiter,
  rateLimitHeaders,
} from './platform/ratelimit.js';
export type { Counter, CounterState } from './platform/ratelimit-counter.js';
export type { CounterOptions, CounterStore } from './platform/ratelimit-store.js';
export { counterStore, memoryCounters } from './platform/ratelimit-store.js';
