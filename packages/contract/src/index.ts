export type { OpenApiDocument } from './document.js';
export { loadDocument } from './document.js';
export type { components, operations, paths } from './generated/schema.js';
export type { HttpMethod, OperationInfo } from './operations.js';
export { HTTP_METHODS, listOperations } from './operations.js';
export type { ErrorCode, OperationId, Schema } from './types.js';
