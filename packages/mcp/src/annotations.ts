import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { HttpMethod, OperationId, OperationInfo } from '@svc/contract';

type Hints = Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint'>;

/**
 * Hints from the HTTP method. MCP's meanings: `destructiveHint` = may overwrite or remove existing
 * state (false = only adds); `idempotentHint` = calling again with the same arguments has no further
 * effect on the service (the answer may differ, e.g. a 404 or 409 the second time).
 * - GET reads.
 * - PATCH is destructive: it overwrites fields (and `labels` replaces the whole map, a role can be
 *   lowered), and idempotent: the same patch twice leaves the same state.
 * - DELETE is destructive and idempotent: a repeat finds nothing left to delete (404, or 409
 *   `invalid_state` for a deleted computer).
 * - POST creates by default: additive, and not idempotent (each call with a new `Idempotency-Key`
 *   makes a new resource). Actions that are not creates are listed in {@link ACTION_HINTS}.
 */
const METHOD_HINTS: Partial<Record<HttpMethod, Hints>> = {
  get: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  put: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  patch: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  delete: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  post: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
};

/**
 * POST actions whose hints differ from a create's. This is a judgment the spec does not encode (no
 * OpenAPI keyword says "stopping ends running processes"), so it lives here, keyed by operationId (a
 * key that is no operation of the spec does not compile); `test/spec-drift.test.ts` fails, naming it,
 * when an action of the spec has no entry here or an entry is no longer an action.
 * - start: a second start finds the computer running and answers 409 `invalid_state`: no further effect.
 * - stop: the same, and destructive: whatever ran on the computer is ended.
 * - restart: destructive, and each call reboots again, so not idempotent.
 * - exec: runs an arbitrary command inside the computer, which may change or delete anything there,
 *   and each call runs it again: destructive, not idempotent (MCP's defaults, stated on purpose).
 * - run: exec's long form (a `computer.exec` operation), the same judgment.
 */
export const ACTION_HINTS: Readonly<Record<string, Hints>> = {
  startComputer: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  stopComputer: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  restartComputer: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  execComputer: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  runComputer: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
} satisfies Partial<Record<OperationId, Hints>>;

/**
 * Hints of a POST that acts on an existing resource and is not in {@link ACTION_HINTS}: MCP's
 * cautious defaults (may change or remove state, not idempotent), since a create's "only adds" would
 * be unsafe to assume for an action nobody has judged yet.
 */
const UNJUDGED_ACTION: Hints = { readOnlyHint: false, destructiveHint: true, idempotentHint: false };

/**
 * Whether an operation is an action on an existing resource: a POST to a path with no GET
 * (`/computers/{computer}/stop`). A POST to a collection (its path also lists with GET) creates.
 *
 * @example
 * isAction(stopComputer, ['post']); // true
 */
export function isAction(op: OperationInfo, pathMethods: readonly string[]): boolean {
  return op.method === 'post' && !pathMethods.includes('get');
}

/**
 * The MCP annotations of an operation's tool. `pathMethods` are the methods of its path in the spec
 * (default: a collection's), which tell a create from an action. `openWorldHint` is false: every tool acts only on this
 * service's own resources.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const [op] = listOperations(loadDocument()).filter((o) => o.operationId === 'deleteComputer');
 * if (op) annotationsFor(op).destructiveHint; // true
 */
export function annotationsFor(op: OperationInfo, pathMethods: readonly string[] = ['get']): ToolAnnotations {
  const hints =
    ACTION_HINTS[op.operationId] ??
    (isAction(op, pathMethods) ? UNJUDGED_ACTION : undefined) ??
    METHOD_HINTS[op.method] ??
    UNJUDGED_ACTION;
  return { title: op.summary || op.operationId, ...hints, openWorldHint: false };
}
