import type { OpenApiDocument } from './document.js';

/** HTTP methods an OpenAPI path item can hold, in the order the spec lists them. */
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** One operation of the document, with what routing, the CLI and the MCP tools need to know of it. */
export interface OperationInfo {
  operationId: string;
  method: HttpMethod;
  /** The path as written in the spec, relative to the server URL (e.g. `/workspaces/{workspace}`). */
  path: string;
  tag: string | undefined;
  summary: string;
  description: string;
  /** The operation object itself, `$ref`-free in the bundle except for component references. */
  operation: Record<string, unknown>;
}

/**
 * Every operation of the document, in spec order. Derived, never hand-kept, so a new operation in
 * `spec/` shows up in every consumer (contract coverage, CLI commands, MCP tools) without code changes.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const ids = listOperations(loadDocument()).map((op) => op.operationId);
 */
export function listOperations(document: OpenApiDocument): OperationInfo[] {
  const found: OperationInfo[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Record<string, unknown> | undefined;
      if (!operation) continue;
      const operationId = operation.operationId;
      if (typeof operationId !== 'string')
        throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const tags = operation.tags as string[] | undefined;
      found.push({
        operationId,
        method,
        path,
        tag: tags?.[0],
        summary: String(operation.summary ?? ''),
        description: String(operation.description ?? ''),
        operation,
      });
    }
  }
  return found;
}
