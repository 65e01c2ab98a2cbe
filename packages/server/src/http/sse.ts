import { SSEStreamingApi } from 'hono/streaming';

/**
 * One Server-Sent Event as the spec's stream items describe it (`OperationOutputStreamItem`,
 * `WorkspaceEventStreamItem`): a name, an id that sorts, `data` one JSON object (written on one
 * line), and `retry` with the last event.
 */
export interface ServerSentEvent {
  event: string;
  id: string;
  data: object;
  retry?: number;
}

/**
 * How a handler answers with an event stream: `run` writes the events once the response is on its
 * way, and returns when the stream is over (the response then ends). Everything that can refuse the
 * request (authentication, permission, 404, 429) happens before, in the handler, as a JSON error.
 */
export interface EventStreamBody {
  readonly kind: 'event-stream';
  run(writer: EventWriter): Promise<void>;
}

/**
 * Wraps a stream's `run` as the body a handler answers.
 *
 * @example
 * return { status: 200, body: eventStream(async (writer) => writer.send({ event: 'exit', id: '1', data: {} })) };
 */
export function eventStream(run: (writer: EventWriter) => Promise<void>): EventStreamBody {
  return { kind: 'event-stream', run };
}

/** Whether a handler's answer is an {@link EventStreamBody} (not a JSON body). */
export function isEventStream(body: unknown): body is EventStreamBody {
  return (body as EventStreamBody | undefined)?.kind === 'event-stream';
}

/**
 * What `run` writes with: events and comment lines, each handed to the adapter as one chunk as soon
 * as it is written (nothing buffers it). `signal` aborts when the client has gone (the adapter
 * cancelled the body, or aborted `request.signal`): stop then, the writes go nowhere.
 */
export class EventWriter {
  readonly #api: SSEStreamingApi;
  readonly signal: AbortSignal;

  constructor(api: SSEStreamingApi, signal: AbortSignal) {
    this.#api = api;
    this.signal = signal;
  }

  #pending = 0;

  /** Writes one event: `event:`, `data:` (one line of JSON), `id:`, and `retry:` when given. */
  async send(event: ServerSentEvent): Promise<void> {
    this.#pending++;
    try {
      await this.#api.writeSSE({
        event: event.event,
        id: event.id,
        data: JSON.stringify(event.data),
        ...(event.retry === undefined ? {} : { retry: event.retry }),
      });
    } finally {
      this.#pending--;
    }
  }

  /**
   * Writes a comment line (`: keepalive`): not an event, it keeps idle proxies from closing the
   * connection. Skipped while a write waits for a slow client (that connection is not idle, and
   * comments must not pile up behind it).
   */
  async comment(text: string): Promise<void> {
    if (this.#pending > 0) return;
    this.#pending++;
    try {
      await this.#api.write(`: ${text}\n\n`);
    } finally {
      this.#pending--;
    }
  }

  /** Ends the response now, whatever is still being written (a client that stopped reading). */
  abort(): void {
    this.#api.abort();
  }
}

/**
 * The `200 text/event-stream` response of an {@link EventStreamBody}, for the web-standard core.
 * Hono's `streamSSE` needs a Hono `Context` (it sets headers on it and answers `c.newResponse`), which
 * this core does not have; its writer, `SSEStreamingApi`, needs nothing but a `TransformStream`, so it
 * is used as it is, and the two ways a client's leaving shows are wired to its `abort`: the adapter
 * cancelling the body (@hono/node-server does when the connection closes) and `request.signal`.
 * No `Content-Length` and no `Transfer-Encoding` are set: node:http sends it chunked and writes each
 * chunk as it comes. `X-Accel-Buffering: no` asks a proxy in front (nginx) not to buffer it either.
 *
 * @example
 * const response = eventStreamResponse(body, request, { 'request-id': id }, (error) => log(error));
 */
export function eventStreamResponse(
  body: EventStreamBody,
  request: Request,
  headers: Record<string, string>,
  onError: (error: unknown) => void,
): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const api = new SSEStreamingApi(writable, readable);
  const gone = new AbortController();
  api.onAbort(() => gone.abort());
  const abort = () => api.abort();
  request.signal.addEventListener('abort', abort, { once: true });
  if (request.signal.aborted) api.abort();
  const writer = new EventWriter(api, gone.signal);
  void (async () => {
    try {
      await body.run(writer);
    } catch (error) {
      onError(error);
    } finally {
      request.signal.removeEventListener('abort', abort);
      await api.close();
    }
  })();
  return new Response(api.responseReadable, {
    status: 200,
    headers: {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store',
      'x-accel-buffering': 'no',
    },
  });
}
