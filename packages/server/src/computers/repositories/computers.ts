import type { Queryable } from '../../platform/db/database.js';
import { sqlLiteral } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import { isId } from '../../platform/ids.js';
import { ownerPage } from '../../platform/repositories/keyset.js';
import type { ComputerState } from '../states.js';
import type { ReadCache } from './read-cache.js';

/** A `computers` row. */
export interface ComputerRow {
  id: string;
  workspace_id: string;
  name: string;
  state: ComputerState;
  size: string;
  image: string;
  labels: Record<string, string>;
  current_operation_id: string | null;
  /** The snapshot it was created from (design §4.2), when it was. */
  snapshot_id: string | null;
  /** The host it lives on (design §4.4); null on the simulated driver, which has no hosts. */
  host_id: string | null;
  /** The lifetime (design §4.1): seconds without activity before it ends, when set. */
  idle_timeout_seconds: number | null;
  /** When it ends whatever it does, when set (cleared once acted on). */
  expires_at: Date | null;
  on_end: 'stop' | 'delete';
  last_active_at: Date;
  started_at: Date | null;
  stopped_at: Date | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/**
 * A computer as read for an answer (`GET` one, a list page): only the rendered columns, its timestamps
 * already RFC 3339 text in UTC with milliseconds, formatted by the database (`toISOString`'s shape, and
 * the same truncation of microseconds), so a page of 50 parses and formats no dates in JavaScript.
 */
export type ComputerView = Omit<
  ComputerRow,
  | 'created_by'
  | 'deleted_at'
  | 'started_at'
  | 'stopped_at'
  | 'created_at'
  | 'updated_at'
  | 'expires_at'
  | 'last_active_at'
> & {
  started_at: string | null;
  stopped_at: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  last_active_at: string;
};

/** design §4: a deleted computer answers GET for 7 days, then is gone (housekeeping). */
const DELETED_COMPUTER_RETENTION_DAYS = 7;

/** Deleted computers answer by id for 7 days (design §4); by name only live ones (the name is freed). */
const VISIBLE = `(state <> 'deleted' OR deleted_at > now() - make_interval(days => ${DELETED_COMPUTER_RETENTION_DAYS}))`;

/** `column` as RFC 3339 text in UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
const rfc3339 = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;

/** The columns of a {@link ComputerView}: what `renderComputer` shows, nothing more. */
const VIEW = `id, workspace_id, name, state, size, image, snapshot_id, host_id, labels, current_operation_id, idle_timeout_seconds, on_end, ${['started_at', 'stopped_at', 'created_at', 'updated_at', 'expires_at', 'last_active_at'].map(rfc3339).join(', ')}`;

/**
 * A computer of the workspace by id (deleted ones for 7 days) or name (live ones); 404 `not_found`
 * otherwise. `lock` locks its row.
 *
 * @example
 * const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer, { lock: true });
 */
export async function computerIn(
  db: Queryable,
  workspaceId: string,
  ref: string,
  options: { lock?: boolean } = {},
): Promise<ComputerView> {
  const where = isId(ref) ? `id = $2 AND ${VISIBLE}` : 'name = $2 AND deleted_at IS NULL';
  const { rows } = await db.query<ComputerView>(
    `SELECT ${VIEW} FROM computers WHERE workspace_id = $1 AND ${where}${options.lock ? ' FOR UPDATE' : ''}`,
    [workspaceId, ref],
  );
  if (!rows[0]) throw new ApiError('not_found', `computer ${ref} not found in this workspace`);
  return rows[0];
}

/**
 * One page of a workspace's visible computers, newest first: `limit` rows after the keyset `after`.
 *
 * @example
 * const rows = await listComputerRows(ctx.db, { workspaceId, state: null, selector: null, includeDeleted: false, after: null, limit: 51 });
 */
export async function listComputerRows(
  db: Queryable,
  filter: {
    workspaceId: string;
    state: string | null;
    /** A label selector `{key: value}` the computer's labels must contain. */
    selector: Record<string, string> | null;
    includeDeleted: boolean;
    after: string | null;
    limit: number;
  },
): Promise<ComputerView[]> {
  const page = ownerPage('workspace_id', '$1');
  const { rows } = await db.query<ComputerView>(
    `SELECT ${VIEW} FROM computers
      WHERE ${page.where} AND ${VISIBLE} AND ($2::text IS NULL OR state = $2) AND ($3::jsonb IS NULL OR labels @> $3)
        AND ($4 OR state <> 'deleted') AND ($5::text IS NULL OR id < $5)
      ORDER BY ${page.order} LIMIT $6`,
    [filter.workspaceId, filter.state, filter.selector, filter.includeDeleted, filter.after, filter.limit],
  );
  return rows;
}

/**
 * {@link computerIn} for a read (no lock), through this replica's {@link ReadCache}: a repeated read
 * costs no statement, and never answers from before a change committed ahead of it.
 *
 * @example
 * const computer = await readComputer(ctx.deps.reads, ctx.db, workspace.id, ctx.path.computer);
 */
export function readComputer(
  reads: ReadCache,
  db: Queryable,
  workspaceId: string,
  ref: string,
): Promise<ComputerView> {
  // Whether read by id or by name, the row is this computer's: only its own changes touch it.
  return reads.get(workspaceId, `computer:${ref}`, () => computerIn(db, workspaceId, ref), {
    touches: (row) => (changed) => changed === row.id,
  });
}

/**
 * {@link listComputerRows} through this replica's {@link ReadCache} (a page weighs its rows).
 *
 * @example
 * const rows = await readComputerPage(ctx.deps.reads, ctx.db, filter);
 */
export function readComputerPage(
  reads: ReadCache,
  db: Queryable,
  filter: Parameters<typeof listComputerRows>[1],
): Promise<ComputerView[]> {
  const { workspaceId, state, selector, includeDeleted, after, limit } = filter;
  const key = `page:${JSON.stringify([state, selector, includeDeleted, after, limit])}`;
  return reads.get(workspaceId, key, () => listComputerRows(db, filter), {
    weight: (rows) => Math.max(rows.length, 1),
    touches: (rows) => pageTouchedBy(rows, after, limit),
  });
}

/**
 * Which computers' changes can change a page (newest first, ids below `after`, at most `limit` rows):
 * those whose id is in the id range the page covers, from `after` (excluded; none: the newest) down to
 * its last row, or to the end when the page is not full. A change elsewhere (a computer of another
 * page, whatever its state or labels now) leaves the page as it is. Ids compare as the strings they
 * are, as the query orders them.
 */
function pageTouchedBy(
  rows: readonly ComputerView[],
  after: string | null,
  limit: number,
): (computerId: string) => boolean {
  const last = rows.length >= limit ? rows[rows.length - 1]?.id : undefined;
  return (id) => (after === null || id < after) && (last === undefined || id >= last);
}

/** How many computers of the workspace are not deleted, counted row by row (deleting a workspace). */
export async function countLiveComputers(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM computers WHERE workspace_id = $1 AND state <> 'deleted'`,
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
}

/** The SQLSTATE `svc_take_computer_place` raises when the workspace has no place left (migration 012). */
const NO_COMPUTER_PLACE = 'P0Q01';

/** The largest `integer` PostgreSQL takes: the quota is inlined into SQL as one. */
const INT4_MAX = 2_147_483_647;

/**
 * Counts one more live computer against the workspace's quota (design §11), if it has fewer than
 * `limit`; else the transaction fails with `refusal()`. One conditional `UPDATE` of the workspace's
 * counter (migrations 009 and 012), sent with the COMMIT (`commitWith`): concurrent creates in one
 * workspace run side by side until then, and each holds the workspace's row only for that UPDATE and
 * its commit. The counter is exact: every create adds one here, in the transaction that inserts the
 * computer, and {@link releaseComputerPlace} takes one off in the transaction that marks a computer
 * `deleted`. The statement goes without parameters, so its values are checked, then inlined.
 *
 * @example
 * await takeComputerPlace(tx, workspace.id, limit, () => quotaExceeded(…));
 */
export async function takeComputerPlace(
  db: Queryable,
  workspaceId: string,
  limit: number,
  refusal: () => Error,
): Promise<void> {
  if (!isId(workspaceId)) throw new Error('takeComputerPlace: the workspace must be given by id');
  if (!Number.isSafeInteger(limit) || limit < 0 || limit > INT4_MAX)
    throw new Error('takeComputerPlace: the limit must be an integer from 0 to 2^31 - 1');
  await db.commitWith({
    sql: `SELECT svc_take_computer_place(${sqlLiteral(workspaceId)}, ${limit})`,
    refused: (error) =>
      (error as { code?: unknown } | null)?.code === NO_COMPUTER_PLACE ? refusal() : undefined,
  });
}

/** Gives back a computer's place in the live-computers quota, when it reaches `deleted`. */
export async function releaseComputerPlace(db: Queryable, workspaceId: string): Promise<void> {
  await db.query('UPDATE workspaces SET live_computers = live_computers - 1 WHERE id = $1', [workspaceId]);
}

/** Whether a live computer of the workspace already has `name`. */
export async function computerNameTaken(db: Queryable, workspaceId: string, name: string): Promise<boolean> {
  const taken = await db.query(
    'SELECT 1 FROM computers WHERE workspace_id = $1 AND name = $2 AND deleted_at IS NULL',
    [workspaceId, name],
  );
  return taken.rowCount > 0;
}

/** A computer's lifetime as stored: each field `undefined` to keep, `null` to clear (design §4.1). */
export interface LifetimeChange {
  idle_timeout_seconds?: number | null;
  expires_at?: Date | null;
  on_end?: 'stop' | 'delete';
}

/**
 * Sets a computer's name and labels (each left as it is when `null`) and the lifetime fields
 * `lifetime` names; answers the updated row.
 */
export async function updateComputerRow(
  db: Queryable,
  id: string,
  change: { name: string | null; labels: Record<string, string> | null; lifetime?: LifetimeChange },
): Promise<ComputerRow> {
  const lifetime = change.lifetime ?? {};
  const { rows } = await db.query<ComputerRow>(
    `UPDATE computers SET name = coalesce($2, name), labels = coalesce($3, labels),
            idle_timeout_seconds = CASE WHEN $4 THEN $5::integer ELSE idle_timeout_seconds END,
            expires_at = CASE WHEN $6 THEN $7::timestamptz ELSE expires_at END,
            on_end = coalesce($8, on_end), updated_at = now()
      WHERE id = $1 RETURNING *`,
    [
      id,
      change.name,
      change.labels,
      lifetime.idle_timeout_seconds !== undefined,
      lifetime.idle_timeout_seconds ?? null,
      lifetime.expires_at !== undefined,
      lifetime.expires_at ?? null,
      lifetime.on_end ?? null,
    ],
  );
  return rows[0] as ComputerRow;
}

/**
 * Deletes the computers deleted more than {@link DELETED_COMPUTER_RETENTION_DAYS} days ago (their
 * operations stay); how many.
 *
 * @example
 * const computers = await purgeDeletedComputers(db);
 */
export async function purgeDeletedComputers(db: Queryable): Promise<number> {
  return (
    await db.query(
      `DELETE FROM computers WHERE state = 'deleted' AND deleted_at < now() - make_interval(days => $1)`,
      [DELETED_COMPUTER_RETENTION_DAYS],
    )
  ).rowCount;
}
