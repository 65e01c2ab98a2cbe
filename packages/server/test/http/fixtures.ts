import type { OperationInfo } from '@svc/contract';
import { listOperations, loadDocument } from '@svc/contract';

export const document = loadDocument();
export const operations = listOperations(document);

type Json = Record<string, unknown>;

/** Follows `#/components/...` references of the bundle. */
export function resolve(value: unknown): Json {
  let current = value as Json;
  while (typeof current?.$ref === 'string') {
    let target: unknown = document;
    for (const part of current.$ref.slice(2).split('/')) target = (target as Json)[part];
    current = target as Json;
  }
  return current;
}

/** The operation's path under /v1 with each parameter replaced by the spec's own example. */
export function samplePath(op: OperationInfo): { path: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  for (const p of ((op.operation.parameters as unknown[]) ?? []).map(resolve)) {
    if (p.in === 'path') params[String(p.name)] = String(p.example);
  }
  const path = `/v1${op.path.replace(/\{([^}]+)\}/g, (_, name: string) => params[name] ?? 'missing')}`;
  return { path, params };
}
