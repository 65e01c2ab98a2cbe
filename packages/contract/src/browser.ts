// The reader of the spec's bundle, every export of the package but `loadDocument` (which reads the
// file with node:fs, so it is the main entry's alone): code that runs in a browser (the MSW handlers
// of @svc/react) imports the document itself (`@svc/contract/openapi.json`) and reads it with these.
// The one export list of the package: the main entry (index.ts) adds `loadDocument` to it.

export type { ByteBody, ByteBodyInput, ByteBodyOutput, ByteMediaType } from './bytes.js';
export {
  BYTE_MEDIA_TYPES,
  byteOperationIds,
  byteRequestBody,
  byteResponse,
  isByteOperation,
  MAX_BYTES_EXTENSION,
} from './bytes.js';
export type { OpenApiDocument } from './document.js';
export type {
  components,
  operationPolicies,
  operations,
  paths,
  securityRequirements,
  streamEvents,
  webhookOperations,
  webhooks,
} from './generated/schema.js';
export { streamOperations, webhookEventTypes } from './generated/schema.js';
export type { OperationKind, OperationKindName } from './kinds.js';
export { kindBytes, OPERATION_KINDS, operationKind, operationKinds } from './kinds.js';
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
  securitySchemeNames,
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
export type { Transition } from './transitions.js';
export { operationTransitions, TRANSITIONS_EXTENSION } from './transitions.js';
export type {
  ErrorCode,
  OperationId,
  PermissionOf,
  PolicyOf,
  PublicOperationId,
  Schema,
  SchemesOf,
  StreamEvent,
  StreamOperationId,
  WebhookEvent,
  WebhookEventType,
  WebhookHeaders,
} from './types.js';
export type { WebhookPayload } from './webhooks.js';
export {
  WEBHOOK_MEDIA_TYPE,
  webhookHeaders,
  webhookNames,
  webhookOperation,
  webhookPayloadSchema,
} from './webhooks.js';
