// The stateful mode's first memory: the spec's own list examples.
import { listOperations, type OpenApiDocument } from '@svc/contract/browser';
import type { Body } from './answers.js';
import { exampleAnswer } from './examples.js';
import type { MockState, OperationRecord, Resource } from './state.js';

/**
 * Fills a fresh memory from the spec's examples: each collection's default list example, each item
 * under the parent its `<parent>_id` names (else the first parent), and the operations' history.
 */
export function seedFromExamples(document: OpenApiDocument, state: MockState): void {
  for (const collection of state.collections) {
    const items = ((exampleAnswer(document, collection.list.operationId).body as Body)[collection.plural] ??
      []) as Resource[];
    const owner = state.collections.find((c) => c.param === collection.parents.at(-1));
    for (const item of items) {
      if (!owner) {
        state.add(collection.path, {}, structuredClone(item));
        continue;
      }
      const parentId = item[`${owner.param}_id`];
      const parent =
        state.items(owner.path).find((s) => s.value.id === parentId) ?? state.items(owner.path)[0];
      if (parent)
        state.add(
          collection.path,
          { ...parent.parents, [owner.param]: parent.value.id },
          structuredClone(item),
        );
    }
  }
  const history = listOperations(document).find(
    (op) => op.method === 'get' && op.path.endsWith('/operations'),
  );
  if (history) {
    const records = ((exampleAnswer(document, history.operationId).body as Body).operations ??
      []) as OperationRecord[];
    for (const record of records) state.remember(structuredClone(record));
  }
}
