import type { QueryKey } from '@tanstack/react-query';

/**
 * The ids and names a long-running call's answer names: its operations, their targets, and the
 * resource it carries beside them (a create's `computer`). A query that has one of them as a path
 * parameter shows something the call changed.
 *
 * @example
 * import { operationChanges } from '@svc/react';
 * operationChanges({ computer: { id: 'c1', name: 'box' }, operations: [{ id: 'o1', target: { type: 'computer', id: 'c1' } }] });
 * // ['o1', 'c1', 'box']
 */
export function operationChanges(answer: object): string[] {
  const found = new Set<string>();
  for (const [key, value] of Object.entries(answer)) {
    if (key === 'operations' && Array.isArray(value)) {
      for (const op of value as { id?: unknown; target?: { id?: unknown } }[]) {
        if (typeof op.id === 'string') found.add(op.id);
        if (typeof op.target?.id === 'string') found.add(op.target.id);
      }
    } else if (value && typeof value === 'object') {
      const { id, name } = value as { id?: unknown; name?: unknown };
      if (typeof id === 'string') found.add(id);
      if (typeof name === 'string') found.add(name);
    }
  }
  return [...found];
}

/**
 * Whether a GET query's path parameters name one of `ids` (an operation, a computer by id or by name).
 *
 * @example
 * import { mentionsAny } from '@svc/react';
 * mentionsAny(['get', '/operations/{operation}', { params: { path: { operation: 'o1' } } }], ['o1']); // true
 */
export function mentionsAny(key: QueryKey, ids: readonly string[]): boolean {
  if (key[0] !== 'get') return false;
  const values = (key[2] as { params?: { path?: Record<string, unknown> } } | undefined)?.params?.path ?? {};
  return Object.values(values).some((value) => typeof value === 'string' && ids.includes(value));
}
