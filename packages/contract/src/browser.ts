// Browser-safe entry: the reader of the main entry without `loadDocument` (node:fs). Code that runs in a
// browser (the MSW handlers of @svc/react) imports the document itself (`@svc/contract/openapi.json`)
// and reads it with these.

export type { ByteBody, ByteMediaType } from './bytes.js';
export {
  BYTE_MEDIA_TYPES,
  byteOperationIds,
  byteRequestBody,
  byteResponse,
  isByteOperation,
  MAX_BYTES_EXTENSION,
} from './bytes.js';
export type { OpenApiDocument } from './document.js';
export type { components, operations, paths } from './generated/schema.js';
export { streamOperations, webhookEventTypes } from './generated/schema.js';
export type { HttpMethod, OperationInfo } from './operations.js';
export { HTTP_METHODS, listOperations } from './operations.js';
export type {
  CliPresentation,
  McpHints,
  OperationPolicy,
  Permission,
  Transaction,
  WorkspacePermission,
} from './policy.js';
export {
  CLI_PRESENTATIONS,
  isWorkspacePermission,
  operationPolicy,
  PERMISSIONS,
  TRANSACTIONS,
  WORKSPACE_PERMISSIONS,
} from './policy.js';
export type { OperationResponse, Parameter, RequestBody, SecurityRequirement } from './reader.js';
export {
  enumValues,
  isAnonymous,
  operationParameters,
  operationResponses,
  operationSecurity,
  requestBody,
  responseFor,
} from './reader.js';
export type { JsonObject } from './refs.js';
export { deref, derefWithRef, resolveRef } from './refs.js';
export type { EventStream, StreamEventBranch } from './streams.js';
export {
  CLOSES_STREAM,
  EVENT_STREAM,
  eventStream,
  isStreamOperation,
  STREAM_ENDED,
  streamEventBranch,
  streamOperationIds,
} from './streams.js';
export type { StreamEvent, StreamOperationId } from './types.js';
