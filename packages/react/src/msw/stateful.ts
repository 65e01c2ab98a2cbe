// The stateful mode's answers: creates, reads, updates, deletes, pages and long-running calls on the
// mock's memory, shaped like the server's sandbox answers (design §1–§6). Every body starts from the
// spec's own example of the answer, so its fields are the spec's, never listed here. The writes are in
// writes.ts, the first memory in seed.ts.
import type { OpenApiDocument } from '@svc/contract/browser';
import { failure, ok, type StatefulRequest } from './answers.js';
import { bodyViolations } from './bodies.js';
import { type Collection, pathParams } from './collections.js';
import type { Answer } from './examples.js';
import type { MockState, Resource, Stored } from './state.js';
import { act, create, update } from './writes.js';

/**
 * Answers a request from the mock's memory, or undefined when the operation keeps no state (it is then
 * answered from its example).
 *
 * @example
 * // used by createMock({ stateful: true }); see its README section
 */
export async function statefulAnswer(
  document: OpenApiDocument,
  state: MockState,
  request: StatefulRequest,
): Promise<Answer | undefined> {
  const { op } = request;
  state.tick();
  const refused = refuseBody(document, state, request);
  if (refused) return refused;
  if (op.method === 'get' && op.path.endsWith('/{operation}')) return getOperation(document, state, request);
  if (op.method === 'get' && op.path.endsWith('/operations')) {
    const { parents, failed } = resolveParents(document, state, request);
    if (failed) return failed;
    const workspace = Object.values(parents).at(-1) ?? '';
    return page(document, state, request, 'operations', state.operationsOf(workspace));
  }
  for (const collection of state.collections) {
    const id = op.operationId;
    const kind =
      id === collection.list.operationId
        ? 'list'
        : id === collection.create?.operationId
          ? 'create'
          : id === collection.get?.operationId
            ? 'get'
            : id === collection.update?.operationId
              ? 'update'
              : id === collection.remove?.operationId
                ? 'remove'
                : collection.actions.some((a) => a.operationId === id)
                  ? 'action'
                  : undefined;
    if (!kind) continue;
    const { parents, failed } = resolveParents(document, state, request, collection);
    if (failed) return failed;
    if (kind === 'list') return list(document, state, collection, parents, request);
    if (kind === 'create') return create(document, state, collection, parents, request);
    const item = state.find(collection.path, parents, request.params[collection.param] ?? '');
    if (!item)
      return failure(
        document,
        state,
        op,
        'not_found',
        `${collection.noun} ${request.params[collection.param]} not found`,
      );
    if (kind === 'get') return ok(document, state, op, { [collection.noun]: item.value });
    if (kind === 'update') return update(document, state, collection, item, request);
    return act(document, state, collection, item, request, kind === 'remove');
  }
  // Not kept in memory (a command, a file, a stream): answered from its example, once what its path
  // names is known to exist.
  const { failed } = resolveParents(document, state, request);
  if (failed) return failed;
  const operation = request.params.operation;
  if (operation !== undefined && !state.operation(operation))
    return failure(document, state, op, 'not_found', `operation ${operation} not found`);
  return undefined;
}

function resolveParents(
  document: OpenApiDocument,
  state: MockState,
  request: StatefulRequest,
  collection?: Collection,
): { parents: Record<string, string>; failed?: Answer } {
  const resolved: Record<string, string> = {};
  for (const param of collection?.parents ?? pathParams(request.op.path)) {
    const owner = state.collections.find((c) => c.param === param);
    if (!owner) continue;
    const found = state.find(owner.path, pickParents(resolved, owner), request.params[param] ?? '');
    if (!found) {
      const failed = failure(
        document,
        state,
        request.op,
        'not_found',
        `${owner.noun} ${request.params[param]} not found`,
      );
      return { parents: resolved, failed };
    }
    resolved[param] = found.value.id;
  }
  return { parents: resolved };
}

const pickParents = (resolved: Record<string, string>, collection: Collection) =>
  Object.fromEntries(collection.parents.map((p) => [p, resolved[p] ?? '']));

function list(
  document: OpenApiDocument,
  state: MockState,
  collection: Collection,
  parents: Record<string, string>,
  request: StatefulRequest,
): Answer {
  const includeDeleted = request.query.get('include_deleted') === 'true';
  const label = request.query.get('label')?.split('=');
  const items = state
    .items(collection.path)
    .filter((s: Stored) => Object.entries(parents).every(([k, v]) => s.parents[k] === v))
    .map((s) => s.value)
    .filter((v) => includeDeleted || v.state !== 'deleted')
    .filter((v) => !label || (v.labels as Record<string, string> | undefined)?.[label[0]!] === label[1])
    .filter((v) =>
      [...request.query].every(
        ([name, value]) => !collection.fields.has(name) || name === 'labels' || String(v[name]) === value,
      ),
    );
  return page(document, state, request, collection.plural, items);
}

/** One page, newest first (keyset on id, design §6): `limit` (default 50, at most 200) and `cursor`. */
function page(
  document: OpenApiDocument,
  state: MockState,
  request: StatefulRequest,
  plural: string,
  items: readonly Resource[],
): Answer {
  const limit = Math.min(200, Math.max(1, Number(request.query.get('limit') ?? 50) || 50));
  const cursor = request.query.get('cursor');
  const after = cursor ? atob(cursor) : undefined;
  const sorted = [...items]
    .sort((a, b) => (a.id < b.id ? 1 : -1))
    .filter((v) => after === undefined || v.id < after);
  const shown = sorted.slice(0, limit);
  const has_more = sorted.length > limit;
  const next_cursor = has_more ? btoa(shown.at(-1)!.id) : null;
  return ok(document, state, request.op, { [plural]: shown, next_cursor, has_more });
}

/** `GET /operations/{operation}?wait=N`: held until the operation ends or N seconds pass. */
async function getOperation(
  document: OpenApiDocument,
  state: MockState,
  request: StatefulRequest,
): Promise<Answer> {
  const id = request.params.operation ?? '';
  const wait = Math.min(60, Number(request.query.get('wait') ?? 0) || 0) * 1000;
  const until = state.now() + wait;
  let record = state.operation(id);
  while (record && record.state !== 'succeeded' && record.state !== 'failed' && state.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(state.stepMs, until - state.now())));
    record = state.operation(id);
  }
  return record
    ? ok(document, state, request.op, { operation: record })
    : failure(document, state, request.op, 'not_found', `operation ${id} not found`);
}

/** A body the server would refuse before looking at anything: not JSON, or not of the request's shape. */
function refuseBody(document: OpenApiDocument, state: MockState, request: StatefulRequest) {
  if (request.unreadable)
    return failure(document, state, request.op, 'invalid_request', 'the request body is not valid JSON');
  const violations = bodyViolations(document, request.op, request.body);
  if (violations.length === 0) return undefined;
  return failure(document, state, request.op, 'invalid_argument', 'one or more fields are invalid', {
    field_violations: violations,
  });
}
