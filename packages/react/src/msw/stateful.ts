// The stateful mode's answers: creates, reads, updates, deletes, pages and long-running calls on the
// mock's memory, shaped like the server's sandbox answers (design §1–§6). Every body starts from the
// spec's own example of the answer, so its fields are the spec's, never listed here.
import {
  listOperations,
  type OpenApiDocument,
  type OperationInfo,
  operationResponses,
} from '@svc/contract/browser';
import { type Collection, pathParams } from './collections.js';
import { type Answer, exampleAnswer } from './examples.js';
import { transitionOf } from './lifecycle.js';
import type { MockState, OperationRecord, Resource, Stored } from './state.js';

/** What a stateful answer is computed from. */
export interface StatefulRequest {
  op: OperationInfo;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** The path prefix of the API (`/v1`), for `Location`. */
  prefix: string;
}

type Body = Record<string, unknown>;

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
  if (op.method === 'get' && pathParams(op.path).at(-1) === 'operation') return getOperation(state, request);
  if (op.method === 'get' && op.path.endsWith('/operations')) {
    const { parents, failed } = resolveParents(document, state, request);
    if (failed) return failed;
    const workspace = Object.values(parents).at(-1) ?? '';
    return page(request, 'operations', state.operationsOf(workspace));
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
    if (kind === 'list') return list(state, collection, parents, request);
    if (kind === 'create') return create(document, state, collection, parents, request);
    const item = state.find(collection.path, parents, request.params[collection.param] ?? '');
    if (!item)
      return failure(
        document,
        op,
        'not_found',
        `${collection.noun} ${request.params[collection.param]} not found`,
      );
    if (kind === 'get') return ok({ [collection.noun]: item.value });
    if (kind === 'update') return update(document, state, collection, item, request);
    return act(document, state, collection, item, request, kind === 'remove');
  }
  return undefined;
}

function ok(body: unknown, status = 200, headers: Record<string, string> = {}): Answer {
  return { status, body: structuredClone(body), headers: { 'Content-Type': 'application/json', ...headers } };
}

/** The error answer of `code`: the operation's own example of it, with this message and details. */
function failure(
  document: OpenApiDocument,
  op: OperationInfo,
  code: string,
  message: string,
  details: unknown = null,
): Answer {
  for (const response of operationResponses(document, op)) {
    const examples = Object.keys(
      ((response.response.content ?? {}) as Body)['application/json']
        ? ((response.response.content as Record<string, { examples?: Body }>)['application/json']?.examples ??
            {})
        : {},
    );
    for (const example of examples) {
      const answer = exampleAnswer(document, op.operationId, { status: Number(response.status), example });
      const error = (answer.body as { error?: Body } | undefined)?.error;
      if (error?.code === code) return { ...answer, body: { error: { ...error, message, details } } };
    }
  }
  return { status: 500, body: { error: { code, message, details, request_id: null } }, headers: {} };
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
  return page(request, collection.plural, items);
}

/** One page, newest first (keyset on id, design §6): `limit` (default 50, at most 200) and `cursor`. */
function page(request: StatefulRequest, plural: string, items: readonly Resource[]): Answer {
  const limit = Math.min(200, Math.max(1, Number(request.query.get('limit') ?? 50) || 50));
  const cursor = request.query.get('cursor');
  const after = cursor ? atob(cursor) : undefined;
  const sorted = [...items]
    .sort((a, b) => (a.id < b.id ? 1 : -1))
    .filter((v) => after === undefined || v.id < after);
  const shown = sorted.slice(0, limit);
  const has_more = sorted.length > limit;
  return ok({ [plural]: shown, next_cursor: has_more ? btoa(shown.at(-1)!.id) : null, has_more });
}

async function create(
  document: OpenApiDocument,
  state: MockState,
  collection: Collection,
  parents: Record<string, string>,
  request: StatefulRequest,
): Promise<Answer> {
  const example = exampleAnswer(document, request.op.operationId);
  const template = (example.body as Body)[collection.noun] as Resource;
  const given = (request.body ?? {}) as Body;
  if (typeof given.name === 'string' && state.find(collection.path, parents, given.name))
    return failure(
      document,
      request.op,
      'already_exists',
      `a ${collection.noun} named ${given.name} already exists`,
    );
  const id = state.id();
  const now = state.timestamp();
  const value: Resource = { ...template, id, created_at: now, updated_at: now };
  for (const [field, v] of Object.entries(given)) if (collection.fields.has(field)) value[field] = v;
  for (const [param, parentId] of Object.entries(parents))
    if (collection.fields.has(`${param}_id`)) value[`${param}_id`] = parentId;
  for (const field of ['current_operation_id', 'started_at', 'stopped_at', 'last_used_at'])
    delete value[field];
  state.add(collection.path, parents, value);
  // The example's other parts (a key's `key_file`) name the example's id: they name the new one.
  const body = JSON.parse(JSON.stringify(example.body).replaceAll(template.id, id)) as Body;
  body[collection.noun] = value;
  if (!Array.isArray(body.operations)) return ok(body, example.status);
  return accepted(state, request, body, value, parents);
}

function update(
  document: OpenApiDocument,
  state: MockState,
  collection: Collection,
  item: Stored,
  request: StatefulRequest,
): Answer {
  const given = (request.body ?? {}) as Body;
  if (item.value.state === 'deleted')
    return failure(
      document,
      request.op,
      'invalid_state',
      `${collection.noun} ${item.value.name} is deleted`,
      { current_state: 'deleted' },
    );
  if (
    typeof given.name === 'string' &&
    given.name !== item.value.name &&
    state.find(collection.path, item.parents, given.name)
  )
    return failure(
      document,
      request.op,
      'already_exists',
      `a ${collection.noun} named ${given.name} already exists`,
    );
  for (const [field, v] of Object.entries(given)) if (collection.fields.has(field)) item.value[field] = v;
  item.value.updated_at = state.timestamp();
  return ok({ [collection.noun]: item.value });
}

/** A delete, or an action (`…/{computer}/start`): at once (204, 200) or as an operation (202). */
function act(
  document: OpenApiDocument,
  state: MockState,
  collection: Collection,
  item: Stored,
  request: StatefulRequest,
  removing: boolean,
): Answer {
  const example = exampleAnswer(document, request.op.operationId);
  const templates = (example.body as { operations?: OperationRecord[] } | undefined)?.operations;
  const rule = transitionOf(templates?.[0]?.type ?? (removing ? 'delete' : ''));
  if (templates && item.value.current_operation_id)
    return failure(
      document,
      request.op,
      'operation_in_progress',
      `${collection.noun} ${item.value.name} has an operation in progress`,
      { operation_id: item.value.current_operation_id },
    );
  if (templates && rule.from.length > 0 && !rule.from.includes(item.value.state as never))
    return failure(
      document,
      request.op,
      'invalid_state',
      `cannot do that to a ${collection.noun} that is ${item.value.state}`,
      { current_state: item.value.state, allowed_from: [...rule.from] },
    );
  if (removing && !templates) {
    const live = state.collections
      .filter((c) => c.parents.at(-1) === collection.param && c.remove)
      .some((c) =>
        state
          .items(c.path)
          .some(
            (s) =>
              s.parents[collection.param] === item.value.id &&
              s.value.state !== undefined &&
              s.value.state !== 'deleted',
          ),
      );
    if (live)
      return failure(
        document,
        request.op,
        'invalid_state',
        `${collection.noun} ${item.value.name} is not empty`,
      );
    state.remove(collection.path, item.value.id);
    return { status: example.status, body: undefined, headers: {} };
  }
  if (!templates) return ok(example.body, example.status);
  return accepted(state, request, { ...(example.body as Body) }, item.value, item.parents);
}

/** A 202: the example's operations, made real on `target`, with `Location` and `Retry-After` (design §2). */
function accepted(
  state: MockState,
  request: StatefulRequest,
  body: Body,
  target: Resource,
  parents: Record<string, string>,
): Answer {
  const now = state.timestamp();
  const operations = (body.operations as OperationRecord[]).map((template) => {
    const { result: _result, error: _error, started_at: _s, completed_at: _c, ...rest } = template;
    return state.start(
      {
        ...rest,
        id: state.id(),
        workspace_id:
          (target.workspace_id as string | undefined) ?? Object.values(parents)[0] ?? rest.workspace_id,
        state: 'pending',
        progress: 0,
        target: { type: template.target.type, id: target.id },
        created_at: now,
        updated_at: now,
      } as OperationRecord,
      target,
    );
  });
  return ok({ ...body, operations }, 202, {
    Location: `${request.prefix}/operations/${operations[0]?.id}`,
    'Retry-After': '1',
  });
}

/** `GET /operations/{operation}?wait=N`: held until the operation ends or N seconds pass. */
async function getOperation(state: MockState, request: StatefulRequest): Promise<Answer | undefined> {
  const id = request.params.operation ?? '';
  const wait = Math.min(60, Number(request.query.get('wait') ?? 0) || 0) * 1000;
  const until = state.now() + wait;
  let record = state.operation(id);
  while (record && record.state !== 'succeeded' && record.state !== 'failed' && state.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(state.stepMs, until - state.now())));
    record = state.operation(id);
  }
  return record ? ok({ operation: record }) : undefined;
}

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
