// Browser-safe entry: no Node built-ins here or in anything it imports (see src/node.ts for those).
export type { GetToken } from './auth/tokens.js';
export type { ClientOptions, SvcClient } from './client.js';
export { CLIENT_VERSION, createClient } from './client.js';
export type { ComputerWaitOptions } from './computer-state.js';
export { waitForComputerState } from './computer-state.js';
export type {
  ApiMethod,
  ApiPaths,
  ApiResponse,
  Computer,
  ComputerState,
  ErrorCode,
  KnownValues,
  Operation,
  OperationState,
  Token,
  WithOptionalIdempotencyKey,
} from './contract.js';
export { ApiError, KeyFileError, NetworkError, TimeoutError } from './errors.js';
export type { KeyFile } from './key-file.js';
export { parseKeyFile } from './key-file.js';
export type { WaitOptions } from './operations.js';
export { isOperationDone, waitForOperations } from './operations.js';
export type { ListInit, ListItem, ListPath } from './paginate.js';
export { paginate } from './paginate.js';
export type { RetryOptions, Sleep } from './retry.js';
export { parseRetryAfter } from './retry.js';
export type { Unwrapped } from './unwrap.js';
export { errorFromResponse, unwrap } from './unwrap.js';
