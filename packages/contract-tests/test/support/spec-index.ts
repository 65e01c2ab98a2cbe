import { listOperations, loadDocument, type OperationInfo } from '@svc/contract';

/** One operation of the bundled spec, with a matcher for concrete request paths. */
export interface IndexedOperation extends OperationInfo {
  pattern: RegExp;
  literals: number;
}

const document = loadDocument();

/** Every operation of the bundled spec (never a hand-kept list). */
export const OPERATIONS: readonly IndexedOperation[] = listOperations(document).map((op) => {
  const segments = op.path.split('/').filter(Boolean);
  const source = segments.map((s) =>
    s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  );
  return {
    ...op,
    pattern: new RegExp(`^/${source.join('/')}/?$`),
    literals: segments.filter((s) => !s.startsWith('{')).length,
  };
});

/** The operation a request (method + path relative to the base URL) is an instance of, if any. */
export function matchOperation(method: string, path: string): IndexedOperation | undefined {
  const candidates = OPERATIONS.filter((op) => op.method === method.toLowerCase() && op.pattern.test(path));
  return candidates.sort((a, b) => b.literals - a.literals)[0];
}

/** operationIds of the spec that `exercised` lacks, in spec order: what the coverage test reports. */
export function uncovered(exercised: ReadonlySet<string>): string[] {
  return OPERATIONS.map((op) => op.operationId).filter((id) => !exercised.has(id));
}

export { document };
