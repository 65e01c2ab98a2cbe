// The streams of `@svc/client/streams` against a Server-Sent Events server written from the stream spec
// (@svc/tools/sse-server), over real sockets: resumption, token renewal, the final event, unknown
// names, aborts, and the JSON errors before a stream starts.
import { eventStream, listOperations, loadDocument, streamEventBranch } from '@svc/contract';
import { type SseServer, type SseServerOptions, startSseServer } from '@svc/tools/sse-server';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createClient, NetworkError } from '../src/index.js';
import {
  isAfter,
  STREAM_OPERATIONS,
  StreamEndedError,
  type StreamItem,
  stream,
  streamOperationOutput,
  streamWorkspaceEvents,
} from '../src/streams.js';
import { recordingSleep } from './helpers.js';

const OUTPUT = '/operations/op1/output';
const EVENTS = '/workspaces/dev/events';
const chunk = (data: string, offset = 0) => ({ stream: 'stdout', offset, encoding: 'utf-8', data });
const EXIT = {
  exit_code: 3,
  stdout_truncated: false,
  stderr_truncated: false,
  timed_out: false,
  duration_ms: 5,
};
const computerEvent = (sequence: number) => ({
  id: `ev${sequence}`,
  sequence,
  type: 'computer.updated',
  workspace_id: 'w',
  created_at: '2026-11-09T18:00:00Z',
  computer: { id: 'c', name: 'box', state: 'running' },
});

let server: SseServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(options: SseServerOptions = {}) {
  server = await startSseServer(options);
  return server;
}

function clientOf(sse: SseServer, token = 't1') {
  return createClient({ baseUrl: sse.baseUrl, token });
}

async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

const lastEventIds = (sse: SseServer, path: string) =>
  sse.requests.filter((r) => r.path === `/v1${path}`).map((r) => r.headers['last-event-id']);

describe('streamOperationOutput', () => {
  it('resumes after each drop with Last-Event-ID: every event once, in order, then ends on exit', async () => {
    const sse = await serve({
      plan: ({ connection }) =>
        connection === 0 ? { dropAfter: 2 } : connection === 1 ? { dropAfter: 1 } : {},
    });
    sse.stream(OUTPUT, [
      { event: 'output', data: chunk('a\n') },
      { event: 'output', data: chunk('b\n', 2) },
      { event: 'output', data: chunk('c\n', 4) },
      { event: 'output', data: chunk('d\n', 6) },
      { event: 'exit', data: EXIT },
    ]);
    const { sleep, delays } = recordingSleep();
    const events = await collect(streamOperationOutput(clientOf(sse), 'op1', { sleep, random: () => 1 }));
    expect(events.map((e) => `${e.id}:${e.event}`)).toEqual([
      '1:output',
      '2:output',
      '3:output',
      '4:output',
      '5:exit',
    ]);
    expect(lastEventIds(sse, OUTPUT)).toEqual([undefined, '2', '3']);
    // Backoff: 1 s, then again 1 s (an event in between resets the count).
    expect(delays).toEqual([1000, 1000]);
    const exit = events.at(-1) as StreamItem<'streamOperationOutput'>;
    if (exit.event === 'exit') expect(exit.data.exit_code).toBe(3);
    else throw new Error('no exit event');
  });

  it('returns after the final event even while the server holds the connection open', async () => {
    const sse = await serve();
    sse.stream(OUTPUT, [
      { event: 'output', data: chunk('x') },
      { event: 'failed', data: { code: 'unavailable', message: 'the replica stopped', details: {} } },
    ]);
    const events = await collect(streamOperationOutput(clientOf(sse), 'op1'));
    expect(events.map((e) => e.event)).toEqual(['output', 'failed']);
    await expect.poll(() => sse.openCount(OUTPUT)).toBe(0);
  });

  it('skips event names the spec does not know, and resumes after them', async () => {
    const sse = await serve({ plan: ({ connection }) => (connection === 0 ? { dropAfter: 2 } : {}) });
    sse.stream(OUTPUT, [
      { event: 'output', data: chunk('a') },
      { event: 'progress', data: { percent: 50 } },
      { event: 'exit', data: EXIT },
    ]);
    const { sleep } = recordingSleep();
    const events = await collect(streamOperationOutput(clientOf(sse), 'op1', { sleep }));
    expect(events.map((e) => `${e.id}:${e.event}`)).toEqual(['1:output', '3:exit']);
    expect(lastEventIds(sse, OUTPUT)).toEqual([undefined, '2']);
  });

  it('starts after lastEventId when given', async () => {
    const sse = await serve();
    sse.stream(OUTPUT, [
      { event: 'output', data: chunk('a') },
      { event: 'output', data: chunk('b', 1) },
      { event: 'exit', data: EXIT },
    ]);
    const events = await collect(streamOperationOutput(clientOf(sse), 'op1', { lastEventId: '1' }));
    expect(events.map((e) => e.id)).toEqual(['2', '3']);
    expect(lastEventIds(sse, OUTPUT)).toEqual(['1']);
  });
});

describe('stream.ended', () => {
  it('token_expired: reconnects at once with a renewed token and Last-Event-ID', async () => {
    // t1 expires after the first connection: the server then refuses it with 401, as it would.
    const sse = await serve({
      accept: (token, seen) => token === 't2' || (token === 't1' && !seen.headers['last-event-id']),
      plan: ({ connection }) =>
        connection === 0
          ? { endAfter: 2, end: { reason: 'token_expired', reconnect: true, message: 'expired' } }
          : {},
    });
    sse.stream(
      EVENTS,
      [1, 2, 3].map((n) => ({ event: 'computer.updated', data: computerEvent(n) })),
    );
    let cached = 't1';
    const asked: boolean[] = [];
    const client = createClient({
      baseUrl: sse.baseUrl,
      getToken: async ({ forceRefresh }) => {
        asked.push(forceRefresh);
        if (forceRefresh) cached = 't2';
        return cached;
      },
    });
    const { sleep, delays } = recordingSleep();
    const seen: string[] = [];
    for await (const e of streamWorkspaceEvents(client, 'dev', { after: '0', sleep })) {
      seen.push(e.id);
      if (e.event === 'computer.updated') expect(e.data.computer.name).toBe('box');
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(['1', '2', '3']);
    expect(sse.requests.map((r) => r.headers.authorization)).toEqual(['Bearer t1', 'Bearer t1', 'Bearer t2']);
    expect(lastEventIds(sse, EVENTS)).toEqual([undefined, '2', '2']);
    expect(asked).toEqual([false, false, true]);
    expect(delays).toEqual([]); // no wait before replacing an expired token
  });

  it.each([
    { reason: 'access_revoked', lastEventId: '1' },
    { reason: 'cursor_expired', lastEventId: '1' },
  ])(
    'reconnect: false ($reason) throws StreamEndedError with the reason and the last id',
    async ({ reason, lastEventId }) => {
      const sse = await serve({
        plan: () => ({ endAfter: 1, end: { reason, reconnect: false, message: `ended: ${reason}` } }),
      });
      sse.stream(
        EVENTS,
        [1, 2].map((n) => ({ event: 'computer.updated', data: computerEvent(n) })),
      );
      const error = await collect(streamWorkspaceEvents(clientOf(sse), 'dev', { after: '0' })).catch(
        (e) => e,
      );
      expect(error).toBeInstanceOf(StreamEndedError);
      expect(error).toMatchObject({
        code: reason,
        reconnect: false,
        lastEventId,
        message: `ended: ${reason}`,
      });
    },
  );

  it('shutting_down: waits the retry the server sent, then resumes', async () => {
    const sse = await serve({
      plan: ({ connection }) =>
        connection === 0
          ? {
              endAfter: 1,
              retry: 250,
              end: { reason: 'shutting_down', reconnect: true, message: 'draining' },
            }
          : {},
    });
    sse.stream(OUTPUT, [
      { event: 'output', data: chunk('a') },
      { event: 'exit', data: EXIT },
    ]);
    const { sleep, delays } = recordingSleep();
    const events = await collect(streamOperationOutput(clientOf(sse), 'op1', { sleep }));
    expect(events.map((e) => e.id)).toEqual(['1', '2']);
    expect(delays).toEqual([250]);
  });
});

describe('limits and ends', () => {
  it('gives up with NetworkError after maxReconnects drops in a row, backing off', async () => {
    const sse = await serve({ plan: () => ({ dropAfter: 0 }) });
    sse.stream(OUTPUT);
    const { sleep, delays } = recordingSleep();
    const error = await collect(
      streamOperationOutput(clientOf(sse), 'op1', { sleep, random: () => 1, maxReconnects: 3 }),
    ).catch((e) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(lastEventIds(sse, OUTPUT)).toHaveLength(4);
    expect(delays).toEqual([1000, 2000, 4000]);
  });

  it('drops a connection that sends nothing past idleTimeoutMs, and keeps one that sends keep-alives', async () => {
    const quiet = await serve({ keepAliveMs: 60_000 });
    quiet.stream(EVENTS, [], { live: true });
    const { sleep } = recordingSleep();
    const error = await collect(
      streamWorkspaceEvents(clientOf(quiet), 'dev', { sleep, idleTimeoutMs: 50, maxReconnects: 1 }),
    ).catch((e) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(lastEventIds(quiet, EVENTS)).toHaveLength(2);
    await quiet.close();

    const chatty = await serve({ keepAliveMs: 20 });
    chatty.stream(EVENTS, [], { live: true });
    const iterator = streamWorkspaceEvents(clientOf(chatty), 'dev', { sleep, idleTimeoutMs: 100 });
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 400));
    chatty.push(EVENTS, 'computer.updated', computerEvent(1));
    expect((await first).value).toMatchObject({ id: '1', event: 'computer.updated' });
    expect(lastEventIds(chatty, EVENTS)).toHaveLength(1);
    await iterator.return(undefined);
  });

  it('aborting the signal rejects with its reason and closes the connection', async () => {
    const sse = await serve();
    sse.stream(EVENTS, [], { live: true });
    const controller = new AbortController();
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of streamWorkspaceEvents(clientOf(sse), 'dev', { signal: controller.signal })) {
        seen.push(e.id);
        controller.abort(new Error('enough'));
      }
    })();
    await expect.poll(() => sse.openCount(EVENTS)).toBe(1);
    sse.push(EVENTS, 'computer.created', computerEvent(1));
    sse.push(EVENTS, 'computer.updated', computerEvent(2));
    await expect(done).rejects.toThrow('enough');
    expect(seen).toEqual(['1']);
    await expect.poll(() => sse.openCount(EVENTS)).toBe(0);
  });

  it.each([
    { name: '401 unauthenticated', token: 'wrong', path: 'op1', status: 401, code: 'unauthenticated' },
    { name: '404 not_found', token: 't1', path: 'nope', status: 404, code: 'not_found' },
  ])('a JSON error before the stream throws ApiError: $name', async ({ token, path, status, code }) => {
    const sse = await serve({ accept: (t) => t === 't1' });
    sse.stream(OUTPUT, [{ event: 'exit', data: EXIT }]);
    const error = await collect(streamOperationOutput(clientOf(sse, token), path)).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status, code, requestId: `req-${code}` });
  });
});

describe('the stream table', () => {
  const document = loadDocument();
  it.each(Object.entries(STREAM_OPERATIONS))('%s: path and event names are the bundle’s', (id, table) => {
    const spec = eventStream(document, id);
    expect(spec).toBeDefined();
    expect(listOperations(document).find((op) => op.operationId === id)?.path).toBe(table.path);
    expect(Object.keys(table.events).sort()).toEqual([...(spec?.eventNames ?? [])].sort());
    // Roles as the spec marks them: a branch with x-svc-closes-stream closes, stream.ended ends.
    for (const [name, role] of Object.entries(table.events)) {
      const branch = spec && streamEventBranch(spec, name);
      expect(role, name).toBe(name === 'stream.ended' ? 'ended' : branch?.closes ? 'closes' : 'event');
    }
    expect(Object.keys(STREAM_OPERATIONS).sort()).toEqual(
      listOperations(document)
        .filter((op) => eventStream(document, op))
        .map((op) => op.operationId)
        .sort(),
    );
  });

  it.each([
    ['10', '9', true],
    ['9', '10', false],
    ['7', '7', false],
    ['007', '6', true],
  ])('isAfter(%s, %s) is %s', (a, b, expected) => {
    expect(isAfter(a, b)).toBe(expected);
  });

  it('the generic stream() takes the operation by id', async () => {
    const sse = await serve();
    sse.stream(OUTPUT, [{ event: 'exit', data: EXIT }]);
    const events = await collect(
      stream(clientOf(sse), 'streamOperationOutput', { path: { operation: 'op1' } }),
    );
    expect(events).toEqual([{ event: 'exit', id: '1', data: EXIT }]);
  });
});
