import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { type HttpMethod, type OpenApiDocument, type OperationInfo, operationPolicy } from '@svc/contract';

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
 * - POST creates: additive, and not idempotent (each call with a new `Idempotency-Key` makes a new
 *   resource). A POST that is a custom action declares its own hints in the spec instead.
 */
const METHOD_HINTS: Partial<Record<HttpMethod, Hints>> = {
  get: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  put: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  patch: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  delete: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  post: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
};

/**
 * Hints of a custom action that declares none: MCP's cautious defaults (may change or remove state,
 * not idempotent), since a create's "only adds" would be unsafe to assume for an action nobody has
 * judged. The spec's linter refuses such an action (svc-policy), so only an unlinted document gets these.
 */
const UNJUDGED_ACTION: Hints = { readOnlyHint: false, destructiveHint: true, idempotentHint: false };

/**
 * The MCP annotations of an operation's tool. A custom action's hints are the judgment its spec
 * declares, `x-svc.mcp` (no OpenAPI keyword says "stopping ends running processes"; the reason is the
 * comment beside it); every other operation's follow from its HTTP method. `openWorldHint` is false:
 * every tool acts only on this service's own resources.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * const [op] = listOperations(doc).filter((o) => o.operationId === 'stopComputer');
 * if (op) annotationsFor(doc, op).destructiveHint; // true: whatever ran on the computer is ended
 */
export function annotationsFor(document: OpenApiDocument, op: OperationInfo): ToolAnnotations {
  const { action, mcp } = operationPolicy(document, op);
  const hints: Hints = mcp
    ? { readOnlyHint: false, destructiveHint: mcp.destructive, idempotentHint: mcp.idempotent }
    : action
      ? UNJUDGED_ACTION
      : (METHOD_HINTS[op.method] ?? UNJUDGED_ACTION);
  return { title: op.summary || op.operationId, ...hints, openWorldHint: false };
}
