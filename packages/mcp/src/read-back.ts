import { listOperations, type OpenApiDocument, type OperationInfo } from '@svc/contract';
import { isObjectSchema, type JsonSchema } from './schema.js';

/**
 * Where a long-running call's resource is read after its operations finish: the GET route of that
 * resource, derived from the spec's paths, and the path parameter (if any) that takes the new
 * resource's id.
 * - DELETE, PATCH, PUT `/a/{id}` → GET `/a/{id}`;
 * - POST to a collection `/a` → GET `/a/{param}` (param = the new resource's id);
 * - POST action `/a/{id}/verb` → GET `/a/{id}`.
 */
export interface ReadBack {
  path: string;
  idParam?: string;
  /** The GET operation at `path`. */
  operation: OperationInfo;
}

/**
 * The {@link ReadBack} route of an operation, or undefined when the spec has no such GET.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'createComputer');
 * if (op) readBackRoute(doc, op); // { path: '/workspaces/{workspace}/computers/{computer}', idParam: 'computer' }
 */
export function readBackRoute(document: OpenApiDocument, op: OperationInfo): ReadBack | undefined {
  const route = readBackPath(document, op);
  const operation =
    route && listOperations(document).find((o) => o.method === 'get' && o.path === route.path);
  return route && operation ? { ...route, operation } : undefined;
}

function readBackPath(document: OpenApiDocument, op: OperationInfo): Omit<ReadBack, 'operation'> | undefined {
  const hasGet = (path: string) =>
    Boolean((document.paths[path] as Record<string, unknown> | undefined)?.get);
  if (op.method !== 'post') return hasGet(op.path) ? { path: op.path } : undefined;
  if (hasGet(op.path)) {
    const item = Object.keys(document.paths).find((path) => {
      const rest = path.startsWith(`${op.path}/`) ? path.slice(op.path.length + 1) : '';
      return /^\{[^/}]+\}$/.test(rest) && hasGet(path);
    });
    return item ? { path: item, idParam: item.slice(op.path.length + 2, -1) } : undefined;
  }
  const parent = op.path.slice(0, op.path.lastIndexOf('/'));
  return hasGet(parent) ? { path: parent } : undefined;
}

/**
 * A long-running call's success schema with the read-back resource's properties added: after the
 * wait, the result carries the resource as the GET answers it (the GET's property wins where both
 * name one, since that is what is returned).
 *
 * @example
 * withReadBack({ type: 'object', properties: { operations: {} } }, { type: 'object', properties: { computer: {} } });
 * // { type: 'object', properties: { operations: {}, computer: {} } }
 */
export function withReadBack(accepted: JsonSchema, read: JsonSchema | undefined): JsonSchema {
  if (!read || !isObjectSchema(accepted) || !isObjectSchema(read)) return accepted;
  return { ...accepted, properties: { ...accepted.properties, ...read.properties } };
}
