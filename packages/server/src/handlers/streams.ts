import { type Schema, type StreamOperationId, streamOperations } from '@svc/contract';
import {
  firstRetainedWorkspaceEventSequence,
  lastWorkspaceEventSequence,
  workspaceEventsAfter,
} from '../computers/repositories/events.js';
import { touchComputerActivity } from '../computers/repositories/lifetimes.js';
import {
  lastOperationOutput,
  type OutputEventRecord,
  operationOutputAfter,
} from '../computers/repositories/operation-output.js';
import { type OperationRow, operationById } from '../computers/repositories/operations.js';
import { TERMINAL_OPERATION_STATES } from '../computers/states.js';
import { eventStream } from '../http/sse.js';
import { type Access, allows, type Permission, workspaceAccess } from '../identity/access.js';
import { bearerToken } from '../identity/auth/authenticate.js';
import type { Role } from '../identity/roles.js';
import type { Queryable } from '../platform/db/database.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import { type Batch, type EndReason, type Following, follow } from '../streams/follow.js';
import { permittedWorkspace } from './common.js';
import type { FollowDeps, StreamDeps } from './deps.js';
import type { Ctx, Handler } from './types.js';

/** Events read from a log at once; a stream behind by more reads again at once. */
const BATCH = 200;

/**
 * Whether a stream closes after an event: its branch says `x-svc-closes-stream` in the spec (a command's
 * `exit` and `failed`).
 *
 * @example
 * closesStream('streamOperationOutput', 'exit'); // true
 */
export function closesStream(operationId: StreamOperationId, event: string): boolean {
  const events: Readonly<Record<string, string>> = streamOperations[operationId].events;
  return Object.hasOwn(events, event) && events[event] === 'closes';
}

/**
 * What each workspace event type needs the caller to hold to see it on the stream. Today every type
 * is readable by any member (`read`); a type that needs more (a secret's, say) names it here, and the
 * stream leaves it out for a caller without it.
 *
 * @example
 * allows(role, eventPermission('computer.updated')); // true for any member
 */
function eventPermission(_type: Schema<'WorkspaceEventType'>): Permission {
  return 'read';
}

/**
 * The cursor of a stream request: `Last-Event-ID` (it wins) or `after`, both checked against the spec's
 * pattern by request validation; `undefined` when neither is sent. An id past what a number holds
 * exactly is no event id of ours: 400.
 *
 * @example
 * streamCursor(new Request(url, { headers: { 'last-event-id': '41' } }), '7'); // 41
 */
export function streamCursor(request: Request, after: string | undefined): number | undefined {
  const header = request.headers.get('last-event-id');
  const [field, text] = header !== null ? ['header.Last-Event-ID', header] : ['after', after];
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw invalidArgument([{ field, description: 'is larger than any event id' }]);
  return value;
}

/** When the request's access token expires, in milliseconds since the epoch. */
async function tokenExpiry(ctx: { request: Request; deps: FollowDeps }): Promise<number> {
  const claims = await ctx.deps.tokens.verify(bearerToken(ctx.request.headers.get('authorization')));
  return claims.exp * 1000;
}

/**
 * Re-checks the caller of a stream as a new request would be: the token, the principal and its key
 * (through the principal cache, which revocations invalidate), then its role in the workspace. Any
 * refusal ends the stream (`access_revoked`); the role is what the events are filtered by.
 */
function accessCheck(
  ctx: { request: Request; deps: FollowDeps; db: Queryable },
  workspaceId: string,
  permission: Permission,
): () => Promise<Role | undefined> {
  const authorization = ctx.request.headers.get('authorization');
  return async () => {
    let access: Access;
    try {
      access = await ctx.deps.streams.authenticate(authorization);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) return undefined;
      throw error;
    }
    try {
      return (await workspaceAccess(ctx.db, access, workspaceId, permission)).role;
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) return undefined;
      throw error;
    }
  };
}

/**
 * A stream's answer, the same for every stream: the caller's slot among its open streams taken now
 * (429 past `SVC_STREAMS_PER_PRINCIPAL`), its token's expiry read, then `follow` writing the log's
 * events as Server-Sent Events, re-checking the caller's access (`accessCheck`) at every wake-up.
 * `onRole` hears the role each check found (the workspace stream filters events by it).
 */
export async function followed(
  ctx: Ctx<StreamOperationId, FollowDeps>,
  workspaceId: string,
  log: Pick<Following, 'wakeups' | 'key' | 'after' | 'endAtOnce' | 'read' | 'sending' | 'sent'> & {
    /** Wake the stream this often (a stream of something no log announces: a screen's frames). */
    tickMs?: number;
    /** Told once when the stream has ended, whichever way. */
    closed?: () => void;
  },
  onRole: (role: Role | undefined) => void = () => {},
) {
  const expiresAt = await tokenExpiry(ctx);
  const check = accessCheck(ctx, workspaceId, ctx.permission);
  const slot = ctx.deps.streams.open(ctx.principal.id);
  const { tickMs, closed, ...followedLog } = log;
  return {
    status: 200 as const,
    body: eventStream(async (writer) => {
      const tick = tickMs ? setInterval(() => log.wakeups.notify(log.key), tickMs) : undefined;
      try {
        await follow({
          ...followedLog,
          writer,
          streams: ctx.deps.streams,
          slot,
          expiresAt,
          allowed: async () => {
            const role = await check();
            onRole(role);
            return role !== undefined;
          },
        });
      } finally {
        clearInterval(tick);
        closed?.();
      }
    }),
  };
}

/**
 * `GET /workspaces/{workspace}/events`: the workspace's event log as Server-Sent Events, for any
 * member (404 for anyone else). Without a cursor it starts after the last event at open; a cursor
 * older than the log keeps ends the stream at once (`cursor_expired`).
 */
export const streamWorkspaceEvents: Handler<'streamWorkspaceEvents', StreamDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const cursor = streamCursor(ctx.request, ctx.query.after);
  const last = await lastWorkspaceEventSequence(ctx.db, workspace.id);
  let endAtOnce: EndReason | undefined;
  if (cursor !== undefined && cursor < last) {
    // The log lost the events after the cursor when its oldest kept one is further on (or none is kept).
    const first = await firstRetainedWorkspaceEventSequence(ctx.db, workspace.id);
    if (first === undefined || cursor < first - 1) endAtOnce = 'cursor_expired';
  }
  let role: Role | undefined;
  return followed(
    ctx,
    workspace.id,
    {
      wakeups: ctx.deps.workspaceEvents,
      key: workspace.id,
      after: cursor ?? last,
      endAtOnce,
      read: async (after): Promise<Batch> => {
        const records = await workspaceEventsAfter(ctx.db, workspace.id, after, BATCH);
        const seen = role;
        return {
          events: records
            .filter((record) => seen !== undefined && allows(seen, eventPermission(record.type)))
            .map((record) => ({ event: record.type, id: String(record.sequence), data: record.data })),
          last: Number(records.at(-1)?.sequence ?? after),
          final: records.some((record) => closesStream('streamWorkspaceEvents', record.type)),
          more: records.length === BATCH,
          // Sequences have no holes: a first one past the next means retention took events unread.
          expired: records.length > 0 && Number(records[0]?.sequence) > after + 1,
        };
      },
    },
    (found) => {
      role = found;
    },
  );
};

/**
 * `GET /operations/{operation}/output`: a `computer.exec` operation's output log as Server-Sent
 * Events, from the start or the cursor, until its final event (`exit` or `failed`). Needs `exec` in
 * the operation's workspace (403 for a viewer); a non-member, an operation that runs no command and
 * one whose output is past retention are 404.
 */
export const streamOperationOutput: Handler<'streamOperationOutput', StreamDeps> = async (ctx) => {
  const id = ctx.path.operation;
  const notFound = (why = `operation ${id} not found`) => new ApiError('not_found', why);
  const operation = await operationById(ctx.db, id);
  if (!operation) throw notFound();
  try {
    await workspaceAccess(ctx.db, ctx.access, operation.workspace_id, ctx.permission);
  } catch (error) {
    // A non-member learns nothing: the same answer as for no such operation.
    throw error instanceof ApiError && error.code === 'not_found' ? notFound() : error;
  }
  if (operation.type !== 'computer.exec') throw notFound(`operation ${id} runs no command: it has no output`);
  // Past retention (`SVC_OUTPUT_RETENTION_HOURS`) housekeeping deletes the log; the operation stays.
  const retentionMs = ctx.deps.config.outputRetentionHours * 3_600_000;
  if (operation.completed_at && ctx.deps.streams.now() - operation.completed_at.getTime() > retentionMs)
    throw notFound(`the output of operation ${id} is no longer kept after the command ended`);
  const cursor = streamCursor(ctx.request, ctx.query.after);
  // Someone watching a command's output is using its computer (design §4.1).
  if (!operation.completed_at)
    await touchComputerActivity(ctx.db, operation.target_id, ctx.deps.lifetimeNow());
  return followed(ctx, operation.workspace_id, {
    wakeups: ctx.deps.operationOutput,
    key: id,
    after: cursor ?? 0,
    read: (after) => readOutput(ctx, id, after),
  });
};

/**
 * One read of a command's output log. A log without its final event whose operation has ended
 * nonetheless (one that ended before output was logged) ends with a final event made from the
 * operation, right after the log's last event, so its stream does not wait for ever. A cursor at or
 * past the end of an ended stream gets nothing: the stream closes at once (design §13).
 */
async function readOutput(
  ctx: Ctx<'streamOperationOutput', StreamDeps>,
  id: string,
  after: number,
): Promise<Batch> {
  let records = await operationOutputAfter(ctx.db, id, after, BATCH);
  let ended = false;
  if (records.length === 0) {
    const operation = await operationById(ctx.db, id);
    if (operation && TERMINAL_OPERATION_STATES.has(operation.state)) {
      ended = true;
      // The final event commits with the operation's end: read again, it is there if there is one.
      records = await operationOutputAfter(ctx.db, id, after, BATCH);
      if (records.length === 0) {
        const tail = await lastOperationOutput(ctx.db, id);
        const closed = tail !== undefined && closesStream('streamOperationOutput', tail.event);
        // The made-up final event takes the id after the log's last, once: never a new id per cursor.
        const sequence = Number(tail?.sequence ?? 0) + 1;
        if (!closed && sequence > after) records = [closingEvent(operation, sequence, ctx.requestId)];
      }
    }
  }
  const last = records.at(-1);
  return {
    events: records.map((record) => ({
      event: record.event,
      id: String(record.sequence),
      data: record.data,
    })),
    last: Number(last?.sequence ?? after),
    final:
      (last !== undefined && closesStream('streamOperationOutput', last.event)) ||
      (ended && records.length === 0),
    more: records.length === BATCH,
  };
}

/** The final event of an ended operation whose log has none: its exit, or its error. */
function closingEvent(operation: OperationRow, sequence: number, requestId: string): OutputEventRecord {
  const execution = operation.result?.execution;
  if (operation.state === 'succeeded' && execution)
    return {
      sequence,
      event: 'exit',
      data: {
        exit_code: execution.exit_code,
        stdout_truncated: execution.stdout_truncated,
        stderr_truncated: execution.stderr_truncated,
        timed_out: execution.timed_out,
        duration_ms: execution.duration_ms,
      },
    };
  const error = operation.error ?? { code: 'internal', message: 'the command did not run', details: {} };
  return {
    sequence,
    event: 'failed',
    data: { error: { ...error, request_id: requestId } } as Schema<'Error'>,
  };
}

export const streamHandlers = { streamWorkspaceEvents, streamOperationOutput };
