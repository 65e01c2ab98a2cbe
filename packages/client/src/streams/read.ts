// The reconnecting Server-Sent Events reader behind `@svc/client/streams`. It knows the streams' rules
// (design brief for streams: ids that sort, `Last-Event-ID` resumption, a keep-alive comment every 15 s,
// a last `stream.ended` event saying why and whether to reconnect), not any one stream's events: the
// caller says which event names it knows and which end the stream.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ApiError, NetworkError, StreamEndedError } from '../errors.js';
import { realSleep, type Sleep } from '../retry.js';
import { errorFromResponse } from '../unwrap.js';

/** The name of the server's last event when it ends a stream (`StreamEnded` data). */
export const STREAM_ENDED = 'stream.ended';

/**
 * Options of every stream of `@svc/client/streams`.
 *
 * @example
 * import type { StreamOptions } from '@svc/client/streams';
 * const options: StreamOptions = { lastEventId: '1842', maxReconnects: 10 };
 */
export interface StreamOptions {
  /** Aborting ends the stream: the iterator rejects with the signal's reason and the connection closes. */
  signal?: AbortSignal | undefined;
  /** Resume after this event id (sent as `Last-Event-ID`): the events after it, none missed, none repeated. */
  lastEventId?: string | undefined;
  /** Reconnections in a row without an event in between before giving up. Default 5. */
  maxReconnects?: number | undefined;
  /** First delay before reconnecting after a drop; doubles each time, with full jitter. Default 1 000 ms. A `retry:` the server sent replaces it. */
  reconnectDelayMs?: number | undefined;
  /** Cap on that delay. Default 30 000 ms. */
  maxReconnectDelayMs?: number | undefined;
  /** A connection that sends nothing, not even the 15-second keep-alive comment, for this long is dropped and resumed. Default 45 000 ms. */
  idleTimeoutMs?: number | undefined;
  /** Waits between connections. Default: a real, abortable timer. Tests pass their own. */
  sleep?: Sleep | undefined;
  /** Jitter source. Default `Math.random`. */
  random?: (() => number) | undefined;
}

/** One event as the reader yields it: a known name, its id, its `data` parsed. */
export interface RawStreamEvent {
  event: string;
  id: string;
  data: unknown;
}

/** What the reader needs from a stream operation. */
export interface StreamRules {
  /** Opens one connection: the GET with `Last-Event-ID` when given. Resolves with openapi-fetch's result. */
  open(
    lastEventId: string | undefined,
    signal: AbortSignal,
  ): Promise<{ data?: unknown; error?: unknown; response: Response }>;
  /** Whether the spec names this event (others are skipped: the names are an open enum). */
  known(event: string): boolean;
  /** Whether this event is the stream's last (a command's `exit`): the reader returns after yielding it. */
  final(event: string): boolean;
}

/** A stream's data is at most 1 MiB (the item schemas' `data.maxLength`); twice that bounds the parser. */
const MAX_BUFFER = 2 * 1024 * 1024;

/** Whether event id `a` comes after `b`: ids are decimal positions (`^[0-9]+$`), compared as numbers. */
export function isAfter(a: string, b: string): boolean {
  const x = a.replace(/^0+(?=.)/, '');
  const y = b.replace(/^0+(?=.)/, '');
  return x.length !== y.length ? x.length > y.length : x > y;
}

/**
 * Reads a stream across connections: parses each with eventsource-parser, skips unknown names, comment
 * lines and anything it has already yielded, and reconnects with `Last-Event-ID` = the last id received
 * when the connection drops (or idles past `idleTimeoutMs`), or when the server's `stream.ended` says
 * `reconnect: true` (after a `token_expired`, the client's auth gives the new token: a renewable token
 * source renews a cached token once the server refuses it with 401). Ends after a `final` event; throws
 * {@link StreamEndedError} on `reconnect: false`, {@link ApiError} when a connection is refused before
 * its stream starts, {@link NetworkError} after `maxReconnects` drops in a row.
 *
 * @example
 * for await (const e of readStream(rules, {})) console.log(e.event, e.id, e.data);
 */
export async function* readStream(
  rules: StreamRules,
  options: StreamOptions,
): AsyncGenerator<RawStreamEvent> {
  const { signal } = options;
  const maxReconnects = options.maxReconnects ?? 5;
  const baseDelay = options.reconnectDelayMs ?? 1000;
  const maxDelay = options.maxReconnectDelayMs ?? 30_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  let lastId = options.lastEventId;
  let retryMs: number | undefined;
  let failures = 0;

  for (;;) {
    signal?.throwIfAborted();
    const connection = new AbortController();
    // The caller's abort reaches the connection through a listener, not AbortSignal.any: a combined
    // signal is held only weakly by its sources, and once collected an abort would be lost until the
    // server's next keep-alive. It also cancels the body's read directly, for the same reason.
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const onAbort = () => {
      connection.abort(signal?.reason);
      reader?.cancel(signal?.reason).catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let ended: { reason: string; reconnect: boolean; message: string } | undefined;
    let requestId: string | undefined;
    let dropped: unknown;
    try {
      const opened = await rules.open(lastId, connection.signal).catch((error: unknown) => {
        // No response at all (the retrying client has already retried it): a drop like any other.
        if (signal?.aborted || !(error instanceof NetworkError)) throw error;
        dropped = error;
        return undefined;
      });
      if (opened) {
        const { data, error, response } = opened;
        requestId = response.headers.get('Request-Id') ?? undefined;
        if (!response.ok) throw errorFromResponse(response, error);
        if (!/^text\/event-stream\b/i.test(response.headers.get('Content-Type') ?? '') || !data) {
          await response.body?.cancel();
          throw new ApiError(`expected text/event-stream, got ${response.headers.get('Content-Type')}`, {
            status: response.status,
            code: 'invalid_response',
            requestId,
          });
        }
        const messages: EventSourceMessage[] = [];
        const parser = createParser({
          onEvent: (message) => messages.push(message),
          onRetry: (ms) => {
            retryMs = ms;
          },
          maxBufferSize: MAX_BUFFER,
        });
        const body = (data as ReadableStream<Uint8Array>).getReader();
        reader = body;
        // One decoder per connection, streaming: a UTF-8 character split across chunks stays whole.
        const decoder = new TextDecoder();
        try {
          for (;;) {
            // The idle timer runs only while waiting on the server, never while the caller holds an event.
            const timer = setTimeout(() => {
              connection.abort(new Error('idle'));
              body.cancel().catch(() => undefined);
            }, idleTimeoutMs);
            let chunk: ReadableStreamReadResult<Uint8Array>;
            try {
              chunk = await body.read();
            } finally {
              clearTimeout(timer);
            }
            if (chunk.done) break;
            parser.feed(decoder.decode(chunk.value, { stream: true }));
            while (messages.length > 0) {
              signal?.throwIfAborted(); // the caller may have aborted while it held the last event
              const message = messages.shift() as EventSourceMessage;
              const name = message.event ?? 'message';
              if (name === STREAM_ENDED) {
                ended = parseData(message, requestId) as typeof ended;
                break;
              }
              const id = message.id ?? lastId;
              if (id !== undefined && lastId !== undefined && !isAfter(id, lastId)) continue; // a repeat
              lastId = id;
              failures = 0;
              if (!rules.known(name)) continue;
              yield { event: name, id: id ?? '', data: parseData(message, requestId) };
              if (rules.final(name)) return;
            }
            if (ended) break;
          }
        } catch (error) {
          if (signal?.aborted || error instanceof ApiError) throw error;
          dropped = error; // a reset, an idle timeout, a parse buffer overflow: resume where it stopped
        } finally {
          body.cancel().catch(() => undefined);
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      connection.abort();
    }
    if (signal?.aborted) throw signal.reason;
    if (ended && !ended.reconnect)
      throw new StreamEndedError(ended.message, {
        code: ended.reason,
        reconnect: false,
        lastEventId: lastId,
        requestId,
      });
    failures += 1;
    if (failures > maxReconnects) {
      if (ended)
        throw new StreamEndedError(`${ended.message} (ended ${failures} times in a row)`, {
          code: ended.reason,
          reconnect: true,
          lastEventId: lastId,
          requestId,
        });
      throw new NetworkError(`the event stream dropped ${failures} times in a row`, {
        cause: dropped,
        attempts: failures,
      });
    }
    // A token that expired is replaced at once; anything else waits what the server asked, else backs off.
    const delay =
      ended?.reason === 'token_expired'
        ? (retryMs ?? 0)
        : (retryMs ?? Math.floor(random() * Math.min(maxDelay, baseDelay * 2 ** (failures - 1))));
    if (delay > 0) await sleep(delay, signal);
  }
}

function parseData(message: EventSourceMessage, requestId: string | undefined): unknown {
  try {
    return JSON.parse(message.data);
  } catch (cause) {
    throw new ApiError(`event ${message.event} ${message.id}: data is not JSON`, {
      status: 200,
      code: 'invalid_response',
      details: { body: message.data.slice(0, 200) },
      requestId,
      cause,
    });
  }
}
