import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';
import {
  renderWorkspaceEvent,
  type StoredWorkspaceEvent,
  type WorkspaceEventData,
} from '../render-events.js';

// A workspace's event log (design §14, migration 013). Triggers write it in the transaction of every
// change; this module only reads it, and deletes what is past retention.

/**
 * The NOTIFY channel of the log: its payload is the id of a workspace whose log grew, sent when the
 * transaction that wrote the events commits (migration 013 names it in SQL; a test keeps them equal).
 */
export const WORKSPACE_EVENTS_CHANNEL = 'svc_workspace_events';

/** One event of a workspace's log, ready to send: `data` is the SSE event's JSON `data`. */
export interface WorkspaceEventRecord {
  /** Its position in the workspace's log, from 1, gapless: the SSE `id`. */
  sequence: number;
  /** The SSE `event` name. */
  type: Schema<'WorkspaceEventType'>;
  data: WorkspaceEventData;
}

/**
 * The events of the workspace after `after`, oldest first, at most `limit`. A reader that reads again
 * after the last sequence it got misses none: sequences commit in order (migration 013).
 *
 * @example
 * const events = await workspaceEventsAfter(db, workspace.id, 41, 100); // [{ sequence: 42, … }, …]
 */
export async function workspaceEventsAfter(
  db: Queryable,
  workspaceId: string,
  after: number,
  limit: number,
): Promise<WorkspaceEventRecord[]> {
  const { rows } = await db.query<StoredWorkspaceEvent>(
    `SELECT id, workspace_id, sequence, type, svc_rfc3339(created_at) AS created_at, data
       FROM workspace_events WHERE workspace_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3`,
    [workspaceId, after, limit],
  );
  return rows.map((row) => ({ sequence: row.sequence, type: row.type, data: renderWorkspaceEvent(row) }));
}

/**
 * The sequence of the workspace's last event, 0 when it has none yet: where a stream opened without a
 * cursor starts ("the next change").
 *
 * @example
 * const from = await lastWorkspaceEventSequence(db, workspace.id);
 */
export async function lastWorkspaceEventSequence(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ last_sequence: number }>(
    'SELECT last_sequence FROM workspace_event_counters WHERE workspace_id = $1',
    [workspaceId],
  );
  return rows[0]?.last_sequence ?? 0;
}

/**
 * The sequence of the oldest event the log still keeps, `undefined` when it keeps none. A cursor
 * below it minus one has lost events to retention (`stream.ended`, `cursor_expired`).
 *
 * @example
 * const first = await firstRetainedWorkspaceEventSequence(db, workspace.id);
 * if (first !== undefined && after < first - 1) endStream('cursor_expired');
 */
export async function firstRetainedWorkspaceEventSequence(
  db: Queryable,
  workspaceId: string,
): Promise<number | undefined> {
  const { rows } = await db.query<{ sequence: number }>(
    'SELECT sequence FROM workspace_events WHERE workspace_id = $1 ORDER BY sequence LIMIT 1',
    [workspaceId],
  );
  return rows[0]?.sequence;
}

/**
 * Deletes the events recorded more than `hours` ago (`SVC_EVENT_RETENTION_HOURS`); how many. Also the
 * counters of workspaces that no longer exist: a change committed beside its workspace's deletion can
 * leave one behind (its events go with retention).
 *
 * @example
 * const events = await purgeWorkspaceEvents(db, 168);
 */
export async function purgeWorkspaceEvents(db: Queryable, hours: number): Promise<number> {
  const { rowCount } = await db.query(
    'DELETE FROM workspace_events WHERE created_at < now() - make_interval(hours => $1)',
    [hours],
  );
  await db.query(
    `DELETE FROM workspace_event_counters c WHERE NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = c.workspace_id)`,
  );
  return rowCount;
}
