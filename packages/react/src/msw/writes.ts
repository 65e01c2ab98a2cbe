// The stateful mode's writes: creates, updates, deletes and actions, and the 202 of a long-running call
// with its operations made real on their target (design §2–§4). Bodies start from the spec's example.
import type { OpenApiDocument } from '@svc/contract/browser';
import { type Body, failure, ok, refuses, type StatefulRequest } from './answers.js';
import type { Collection } from './collections.js';
import { type Answer, exampleAnswer } from './examples.js';
import { transitionOf } from './lifecycle.js';
import type { MockState, OperationRecord, Resource, Stored } from './state.js';

export async function create(
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
      state,
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
  if (Array.isArray(body.operations)) return accepted(document, state, request, body, value, parents);
  const location = Object.entries({ ...parents, [collection.param]: id }).reduce(
    (path, [param, value]) => path.replace(`{${param}}`, encodeURIComponent(value)),
    collection.itemPath,
  );
  const headers: Record<string, string> =
    example.headers.Location === undefined ? {} : { Location: `${request.prefix}${location}` };
  return ok(document, state, request.op, body, example.status, headers);
}

export function update(
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
      state,
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
      state,
      request.op,
      'already_exists',
      `a ${collection.noun} named ${given.name} already exists`,
    );
  for (const [field, v] of Object.entries(given)) if (collection.fields.has(field)) item.value[field] = v;
  item.value.updated_at = state.timestamp();
  return ok(document, state, request.op, { [collection.noun]: item.value });
}

/** A delete, or an action (`…/{computer}/start`): at once (204, 200) or as an operation (202). */
export function act(
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
      state,
      request.op,
      'operation_in_progress',
      `${collection.noun} ${item.value.name} has an operation in progress`,
      { operation_id: item.value.current_operation_id },
    );
  if (templates && rule.from.length > 0 && !rule.from.includes(item.value.state as never))
    return failure(
      document,
      state,
      request.op,
      'invalid_state',
      `cannot do that to a ${collection.noun} that is ${item.value.state}`,
      { current_state: item.value.state, allowed_from: [...rule.from] },
    );
  if (removing && !templates) {
    // A parent with live children is refused only where the spec says so (a workspace with computers
    // is 409 invalid_state; a service account is deleted with its keys).
    const guarded = refuses(document, request.op, 'invalid_state');
    const live =
      guarded &&
      state.collections
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
        state,
        request.op,
        'invalid_state',
        `${collection.noun} ${item.value.name} is not empty`,
      );
    state.remove(collection.path, item.value.id);
    return ok(document, state, request.op, undefined, example.status);
  }
  if (!templates) return ok(document, state, request.op, example.body, example.status);
  return accepted(document, state, request, { ...(example.body as Body) }, item.value, item.parents);
}

/** A 202: the example's operations, made real on `target`, with `Location` and `Retry-After` (design §2). */
function accepted(
  document: OpenApiDocument,
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
  return ok(document, state, request.op, { ...body, operations }, 202, {
    Location: `${request.prefix}/operations/${operations[0]?.id}`,
    'Retry-After': '1',
  });
}
