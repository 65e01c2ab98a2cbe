export type { OpenApiDocument } from './document.js';
export { loadDocument } from './document.js';
export type { components, operations, paths, securityRequirements } from './generated/schema.js';
export type { HttpMethod, OperationInfo } from './operations.js';
export { HTTP_METHODS, listOperations } from './operations.js';
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
export type { ErrorCode, OperationId, PublicOperationId, Schema, SchemesOf } from './types.js';
