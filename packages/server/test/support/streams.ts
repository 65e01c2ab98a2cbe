// Reading the server's event streams as a client does: with eventsource-parser (what the client
// package parses them with), every event checked against the spec's stream item schema and its
// `data` against the schema the item's branch names for its event.
import { type JsonObject, loadDocument } from '@svc/contract';
import { createParser } from 'eventsource-parser';
import { ORIGIN } from './app.js';
import { schemaErrors } from './spec-schemas.js';

/** The spec's SSE item schemas. */
export type StreamItem =
  | 'WorkspaceEventStreamItem'
  | 'OperationOutputStreamItem'
  | 'TerminalOutputStreamItem';

/** One event as received, `data` parsed; `at` is when it arrived (performance.now()). */
export interface ReceivedEvent {
  event: string;
  id: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read data loosely; it was validated against its schema
  data: any;
  retry: number | undefined;
  at: number;
}

/** An open stream as a client sees it. */
export interface OpenedStream {
  status: 200;
  headers: Headers;
  events: ReceivedEvent[];
  /** Comment lines received (`keepalive`), with when each arrived. */
  comments: { text: string; at: number }[];
  /** Every way an event broke the spec (none expected). */
  violations: string[];
  /** Resolves when the server ended the response. */
  closed: Promise<void>;
  /** The next event (or the first already received after `index`) that satisfies `match`, else throws after `timeoutMs`. */
  waitFor(match: (event: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  /** Hangs up (cancels the body), as a client that goes away. */
  close(): Promise<void>;
}

/** A stream request the server refused before streaming: a JSON error. */
export interface Refused {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: the published error shape, read loosely
  body: any;
}

const document = loadDocument();

/** The component its branch names for `event`'s data, from the item schema's `oneOf`. */
function dataSchemaOf(item: StreamItem, event: string): string | undefined {
  const schema = document.components?.schemas?.[item] as JsonObject & { oneOf: JsonObject[] };
  for (const branch of schema.oneOf) {
    const props = branch.properties as Record<string, JsonObject>;
    const name = props.event as { const?: string; enum?: string[] };
    if (name.const === event || name.enum?.includes(event)) {
      const ref = (props.data?.contentSchema as { $ref?: string } | undefined)?.$ref;
      return ref?.split('/').at(-1);
    }
  }
  return undefined;
}

/**
 * Opens `path` as an event stream through `fetch` (an app's core or a socket) and reads it in the
 * background. A refusal (any status but 200) answers its JSON body instead.
 *
 * @example
 * const stream = await openStream(t.app.fetch, `/v1/workspaces/${ws}/events`, 'WorkspaceEventStreamItem', { token });
 * const created = await stream.waitFor((e) => e.event === 'computer.created');
 */
export async function openStream(
  fetch: (request: Request) => Promise<Response>,
  path: string,
  item: StreamItem,
  options: { token?: string; headers?: Record<string, string>; origin?: string; signal?: AbortSignal } = {},
): Promise<OpenedStream | Refused> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(
    new Request(`${options.origin ?? ORIGIN}${path}`, {
      headers,
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
  if (response.status !== 200 || !response.body) {
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }
  const events: ReceivedEvent[] = [];
  const comments: { text: string; at: number }[] = [];
  const violations: string[] = [];
  const waiters = new Set<() => void>();
  let retry: number | undefined;
  const parser = createParser({
    onRetry: (value) => {
      retry = value;
    },
    onComment: (text) => comments.push({ text: text.trim(), at: performance.now() }),
    onEvent: (message) => {
      const raw = { event: message.event ?? 'message', id: message.id ?? '', data: message.data };
      const sent = retry === undefined ? raw : { ...raw, retry };
      for (const error of schemaErrors(item, sent)) violations.push(`${raw.event} ${raw.id}: ${error}`);
      let data: unknown;
      try {
        data = JSON.parse(message.data);
      } catch {
        violations.push(`${raw.event} ${raw.id}: data is not JSON`);
      }
      const schema = dataSchemaOf(item, raw.event);
      if (!schema) violations.push(`${raw.event} ${raw.id}: no schema names this event`);
      else
        for (const error of schemaErrors(schema, data)) violations.push(`${raw.event} ${raw.id}: ${error}`);
      events.push({ event: raw.event, id: raw.id, data, retry, at: performance.now() });
      retry = undefined;
      for (const wake of waiters) wake();
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let done = false;
  const closed = (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        parser.feed(chunk.value);
      }
    } catch {
      // The client hung up (close) or the connection was cut.
    } finally {
      done = true;
      for (const wake of waiters) wake();
    }
  })();
  return {
    status: 200,
    headers: response.headers,
    events,
    comments,
    violations,
    closed,
    async waitFor(match, timeoutMs = 5000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        const left = deadline - performance.now();
        if (done || left <= 0)
          throw new Error(
            `no such event ${done ? 'before the stream ended' : `within ${timeoutMs} ms`}; got ${JSON.stringify(events.map((e) => [e.event, e.id]))}`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(wake, left);
          function wake() {
            clearTimeout(timer);
            waiters.delete(wake);
            resolve();
          }
          waiters.add(wake);
        });
      }
    },
    async close() {
      await reader.cancel().catch(() => {});
      await closed;
    },
  };
}

/** Narrows an open attempt to the stream, or throws with the refusal. */
export function opened(result: OpenedStream | Refused): OpenedStream {
  if (result.status !== 200)
    throw new Error(`expected a stream, got ${result.status} ${JSON.stringify((result as Refused).body)}`);
  return result as OpenedStream;
}
