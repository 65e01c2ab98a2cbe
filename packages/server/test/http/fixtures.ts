import type { JsonObject, OperationInfo } from '@svc/contract';
import { deref, listOperations, loadDocument, operationParameters } from '@svc/contract';

export const document = loadDocument();
export const operations = listOperations(document);

/** Follows `#/components/...` references of the bundle. */
export function resolve(value: unknown): JsonObject {
  return deref(document, value);
}

/** The operation's path under /v1 with each parameter replaced by the spec's own example. */
export function samplePath(op: OperationInfo): { path: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  for (const p of operationParameters(document, op)) {
    if (p.in === 'path') params[p.name] = String(p.example);
  }
  const path = `/v1${op.path.replace(/\{([^}]+)\}/g, (_, name: string) => params[name] ?? 'missing')}`;
  return { path, params };
}
