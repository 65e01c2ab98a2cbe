// Streaming entry (`@svc/client/streams`): the spec's Server-Sent Events streams as async iterators.
// Browser-safe; kept apart from the main entry so a one-call app does not bundle the SSE parser.
import type { operations, StreamEvent, StreamOperationId } from '@svc/contract';
import { streamOperations } from '@svc/contract/browser';
import type { SvcClient } from './client.js';
import type { ApiPaths } from './contract.js';
import { readStream, type StreamOptions } from './streams/read.js';

export type { StreamEndedReason } from './contract.js';
export { StreamEndedError } from './errors.js';
export { isAfter, type StreamOptions } from './streams/read.js';

/** What the reader does with an event: hand it over, hand it over and end, or read why the server ended. */
type EventRole = 'event' | 'closes' | 'ended';

/**
 * The paths and event roles of the stream operations, generated from the bundle by @svc/contract:
 * `event` (hand it over), `closes` (hand it over, then the stream is over: a command's `exit`, marked
 * `x-svc-closes-stream` in the spec), `ended` (`stream.ended`, the server's own last word).
 *
 * @example
 * import { STREAM_OPERATIONS } from '@svc/client/streams';
 * STREAM_OPERATIONS.streamOperationOutput.path; // '/operations/{operation}/output'
 */
export const STREAM_OPERATIONS: {
  readonly [K in StreamOperationId]: {
    readonly path: string;
    readonly events: Readonly<Record<string, EventRole>>;
  };
} = streamOperations;

/**
 * An event a stream yields: one of the spec's events of operation `K` (`event`, `id`, and `data` parsed
 * and typed by the schema its branch names), never `stream.ended`, which the iterator acts on itself.
 *
 * @example
 * import type { StreamItem } from '@svc/client/streams';
 * const line = (e: StreamItem<'streamWorkspaceEvents'>) => `${e.id} ${e.event}`;
 */
export type StreamItem<K extends StreamOperationId> = Exclude<StreamEvent<K>, { event: 'stream.ended' }>;

/**
 * What {@link stream} takes besides the operation: its path parameters, its query (`after`), and the
 * {@link StreamOptions}.
 *
 * @example
 * import type { StreamInit } from '@svc/client/streams';
 * const init: StreamInit<'streamWorkspaceEvents'> = { path: { workspace: 'dev' }, query: { after: '0' } };
 */
export type StreamInit<K extends StreamOperationId> = StreamOptions & {
  path: operations[K]['parameters']['path'];
  query?: operations[K]['parameters']['query'];
};

type LooseGet = (
  path: string,
  init: { params: Record<string, unknown>; parseAs: 'stream'; signal: AbortSignal },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * Follows a stream operation of the spec as an async iterator of its events, typed by the spec
 * (`StreamEvent<K>`), through the client (its auth, and its retries when it has them):
 *
 * - each event has `event`, `id` and `data` parsed; names the spec does not know yet are skipped;
 * - a dropped connection (or one silent past `idleTimeoutMs`) is resumed with `Last-Event-ID` = the
 *   last id received, after a backoff (or the server's `retry:`), at most `maxReconnects` times in a
 *   row: the caller sees no gap and no repeat;
 * - `stream.ended` with `reconnect: true` resumes the same way (`token_expired`: at once, with the
 *   client's renewed token); with `reconnect: false` the iterator throws {@link StreamEndedError}
 *   carrying the reason and the last id;
 * - it returns after a final event (a command's `exit` or `failed`), or when the caller breaks;
 * - a refusal before the stream starts (the JSON error of a 401, 404, 429…) throws `ApiError`.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { stream } from '@svc/client/streams';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * for await (const e of stream(client, 'streamWorkspaceEvents', { path: { workspace: 'dev' } })) {
 *   if (e.event === 'computer.updated') console.log(e.data.computer.name, e.data.computer.state);
 * }
 */
export function stream<K extends StreamOperationId>(
  client: SvcClient<ApiPaths>,
  operationId: K,
  init: StreamInit<K>,
): AsyncGenerator<StreamItem<K>, void, undefined> {
  const { path: pathParams, query, ...options } = init;
  const { path, events } = STREAM_OPERATIONS[operationId];
  const get = (client as unknown as { GET: LooseGet }).GET;
  return readStream(
    {
      // Last-Event-ID wins over `after` (the spec's LastEventId parameter), so `after` can stay.
      open: (lastEventId, signal) =>
        get(path, {
          params: {
            path: pathParams,
            query: query ?? {},
            header: lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId },
          },
          parseAs: 'stream',
          signal,
        }),
      known: (event) => Object.hasOwn(events, event) && events[event] !== 'ended',
      final: (event) => events[event] === 'closes',
    },
    options,
  ) as AsyncGenerator<StreamItem<K>, void, undefined>;
}

/**
 * The output of a command run by `POST …/computers/{computer}/run` (`streamOperationOutput`): `output`
 * chunks (stdout and stderr, in the order written; `encoding` says whether `data` is text or base64),
 * then one `exit` or `failed`, after which the iterator returns.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { streamOperationOutput } from '@svc/client/streams';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * for await (const e of streamOperationOutput(client, '01m6…')) {
 *   if (e.event === 'output') console.log(e.data.stream, e.data.data);
 *   if (e.event === 'exit') console.log('exit code', e.data.exit_code);
 * }
 */
export function streamOperationOutput(
  client: SvcClient<ApiPaths>,
  operation: string,
  options: StreamOptions & { after?: string | undefined } = {},
): AsyncGenerator<StreamItem<'streamOperationOutput'>, void, undefined> {
  const { after, ...rest } = options;
  return stream(client, 'streamOperationOutput', {
    ...rest,
    path: { operation },
    ...(after === undefined ? {} : { query: { after } }),
  });
}

/**
 * A workspace's events (`streamWorkspaceEvents`): one per change of a computer, an operation, a member,
 * a service account, a key or the workspace, each with the resource as it stands after it. Starts at the
 * next change; `after: '0'` replays what the log keeps, `lastEventId` resumes after an id. Runs until
 * the caller breaks or aborts.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { streamWorkspaceEvents } from '@svc/client/streams';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const stop = new AbortController();
 * for await (const e of streamWorkspaceEvents(client, 'dev', { signal: stop.signal, after: '0' })) console.log(e.id, e.event);
 */
export function streamWorkspaceEvents(
  client: SvcClient<ApiPaths>,
  workspace: string,
  options: StreamOptions & { after?: string | undefined } = {},
): AsyncGenerator<StreamItem<'streamWorkspaceEvents'>, void, undefined> {
  const { after, ...rest } = options;
  return stream(client, 'streamWorkspaceEvents', {
    ...rest,
    path: { workspace },
    ...(after === undefined ? {} : { query: { after } }),
  });
}
