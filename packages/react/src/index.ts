// The hooks: TanStack Query over @svc/client. Browser-safe; the MSW handlers are in `@svc/react/msw`.
export type { HooksOptions, SvcHooks } from './hooks.js';
export { createHooks } from './hooks.js';
export { MAX_ATTEMPTS, retryDelay, shouldRetry, withIdempotencyKey } from './idempotency.js';
export type { ParamMatch, Resource, SvcQueryKey } from './keys.js';
export { changedBy, keyMatches, queryKey, resourceFilter } from './keys.js';
export type {
  MutationExtras,
  MutationOptionsOf,
  OperationMutationOptionsOf,
  OperationPathsOf,
  OperationWaiter,
} from './mutations.js';
export { mentionsAny, operationChanges } from './operations.js';
export type { ItemOf } from './pages.js';
export { itemsOf } from './pages.js';
export type { LiveFrame, ScreenSession, ScreenStatus, UseScreenOptions } from './screen.js';
export { useScreen } from './screen.js';
export type { TerminalSession, TerminalStatus, UseTerminalOptions } from './terminal.js';
export { useTerminal } from './terminal.js';
export type {
  Callable,
  DataOf,
  ErrorOf,
  ErrorStatusOf,
  InitOf,
  MutationMethod,
  OperationOf,
  PathsOf,
  StatusError,
} from './types.js';
