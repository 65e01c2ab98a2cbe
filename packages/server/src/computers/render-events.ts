import type { Schema } from '@svc/contract';
import {
  renderComputer,
  renderKey,
  renderMember,
  renderOperation,
  renderOperationError,
  renderServiceAccount,
  renderWorkspace,
} from './render.js';
import type { OutputEvent } from './repositories/operation-output.js';
import type { OperationRow } from './repositories/operations.js';

// A workspace's event log (design §14) keeps each resource as the values of its row its wire shape
// reads, timestamps already RFC 3339 text (render.ts, taken by the SQL repositories/event-snapshot.ts
// makes from it); these render an event from it with render.ts, so an event shows a resource exactly
// as the API does.

/** The `data` of a workspace event: the envelope and the resource under its noun. */
export type WorkspaceEventData =
  | Schema<'WorkspaceEvent'>
  | Schema<'ComputerEvent'>
  | Schema<'OperationEvent'>
  | Schema<'MemberEvent'>
  | Schema<'ServiceAccountEvent'>
  | Schema<'KeyEvent'>;

/** An event as the log stores it: its envelope, and the resource's row (`data`). */
export interface StoredWorkspaceEvent {
  id: string;
  workspace_id: string;
  sequence: number;
  type: Schema<'WorkspaceEventType'>;
  /** RFC 3339 in UTC with milliseconds. */
  created_at: string;
  data: Record<string, unknown>;
}

/**
 * The `data` of a workspace event as the stream sends it: the envelope (`id`, `sequence`, `type`,
 * `workspace_id`, `created_at`) and the resource under its noun, rendered as the API renders it (an
 * operation never with its `result`; a key is only ever its public half).
 *
 * @example
 * const data = renderWorkspaceEvent(stored); // { id, sequence: 7, type: 'computer.updated', …, computer: {…} }
 */
export function renderWorkspaceEvent(stored: StoredWorkspaceEvent): WorkspaceEventData {
  const envelope = {
    id: stored.id,
    sequence: stored.sequence,
    type: stored.type,
    workspace_id: stored.workspace_id,
    created_at: stored.created_at,
  };
  const noun = stored.type.slice(0, stored.type.indexOf('.'));
  // The row's timestamps are text; render.ts formats a Date and passes text through.
  const row = stored.data as never;
  switch (noun) {
    case 'workspace':
      return { ...envelope, workspace: renderWorkspace(row) };
    case 'computer':
      return { ...envelope, computer: renderComputer(row) };
    case 'operation':
      return {
        ...envelope,
        operation: renderOperation(row, { result: false }),
      };
    case 'member':
      return { ...envelope, member: renderMember(row) };
    case 'service_account':
      return {
        ...envelope,
        service_account: renderServiceAccount(row),
      };
    case 'key':
      return { ...envelope, key: renderKey(row) };
    default:
      throw new Error(`no rendering for workspace event type ${stored.type}`);
  }
}

/**
 * The last event of a command's output log, from how its operation ends: `exit` with the fields of
 * `result.execution` but its output (the spec's `CommandExit`), or `failed` with the operation's
 * `error` as an error response's body (the command did not run, or could not finish).
 *
 * @example
 * const final = renderCommandEnd(operation.id, { error: null, result }); // { event: 'exit', data: { exit_code: 0, … } }
 */
export function renderCommandEnd(
  operationId: string,
  end: { error: OperationRow['error']; result: OperationRow['result'] },
): OutputEvent {
  if (end.result) {
    const { exit_code, stdout_truncated, stderr_truncated, timed_out, duration_ms } = end.result.execution;
    return { event: 'exit', data: { exit_code, stdout_truncated, stderr_truncated, timed_out, duration_ms } };
  }
  const error = end.error ?? { code: 'internal', message: 'the command did not report back', details: {} };
  return { event: 'failed', data: { error: renderOperationError(error, operationId) } };
}
