// Event streams (`text/event-stream`), read and checked against the spec: each event parsed with
// eventsource-parser, its name known (or skipped: the enum is extensible), its `id` by the item schema's
// pattern and increasing, the event as a whole valid against the item schema (its name and its branch),
// and its `data` JSON valid against the schema its branch names (`data.contentSchema`), read with
// `eventStream` of @svc/contract.
import { type EventStream, eventStream, streamEventBranch } from '@svc/contract';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { validatorAt } from '../../src/validate.js';
import { document } from './spec-index.js';

/** What was read of one stream. */
export interface ReadStream {
  events: EventSourceMessage[];
  /** Comment lines (`: keepalive`), without the colon. */
  comments: string[];
  /** Whether the server closed the stream (else reading stopped after `idleMs` without an event). */
  closed: boolean;
}

/**
 * Reads a stream until the server closes it, or until `idleMs` pass without a new event (a workspace's
 * stream stays open: it is then cancelled), or `maxMs` in all.
 *
 * @example
 * const { events } = await readStream(response.body, { idleMs: 1500 });
 */
export async function readStream(
  body: ReadableStream<Uint8Array> | null,
  { idleMs = 2000, maxMs = 30_000 }: { idleMs?: number; maxMs?: number } = {},
): Promise<ReadStream> {
  const read: ReadStream = { events: [], comments: [], closed: false };
  if (body === null) return { ...read, closed: true };
  const parser = createParser({
    onEvent: (event) => read.events.push(event),
    onComment: (comment) => read.comments.push(comment.trim()),
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + maxMs;
  try {
    while (Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<'idle'>((resolve) => {
        timer = setTimeout(() => resolve('idle'), Math.min(idleMs, deadline - Date.now()));
      });
      const next = await Promise.race([reader.read(), idle]);
      clearTimeout(timer);
      if (next === 'idle') break;
      if (next.done) {
        read.closed = true;
        break;
      }
      parser.feed(decoder.decode(next.value, { stream: true }));
    }
  } finally {
    if (!read.closed) await reader.cancel().catch(() => {});
  }
  return read;
}

/** The stream an operation answers, from the bundle; throws for an operation that is no stream. */
export function streamOf(operationId: string): EventStream {
  const stream = eventStream(document, operationId);
  if (stream === undefined) throw new Error(`${operationId} is not a stream operation`);
  return stream;
}

/** Events whose name the spec does not list: skipped, as clients must (the enum is extensible). */
export function unknownEvents(
  stream: EventStream,
  events: readonly EventSourceMessage[],
): EventSourceMessage[] {
  return events.filter((e) => !stream.eventNames.includes(e.event ?? ''));
}

/**
 * Every way the events of a stream break the contract: an event without a name, or with a name the
 * spec does not list when its enum is closed; an `id` missing, off the item schema's pattern, or not
 * greater than the one before (and than `after`, the cursor the stream resumed from); an event the item
 * schema refuses; `data` that is not JSON, or that its branch's schema refuses.
 */
export function eventViolations(
  stream: EventStream,
  events: readonly EventSourceMessage[],
  { after }: { after?: string } = {},
): string[] {
  const problems: string[] = [];
  const pattern = new RegExp(String(stream.idSchema.pattern ?? '^.*$'), 'u');
  const item = validatorAt(`/components/schemas/${stream.itemSchema}`);
  let previous = after !== undefined ? BigInt(after) : undefined;
  for (const [index, event] of events.entries()) {
    const at = `event ${index} (${event.event ?? 'no name'}, id ${event.id ?? 'none'})`;
    if (event.id === undefined || !pattern.test(event.id)) {
      problems.push(`${at}: id does not match ${pattern}`);
    } else {
      const id = BigInt(event.id);
      if (previous !== undefined && id <= previous) problems.push(`${at}: id is not after ${previous}`);
      previous = id;
    }
    if (event.event === undefined) {
      problems.push(`${at}: no event name`);
      continue;
    }
    const branch = streamEventBranch(stream, event.event);
    if (branch === undefined) {
      if (!stream.extensible) problems.push(`${at}: the spec names no event ${event.event}`);
      continue;
    }
    if (!item({ event: event.event, id: event.id, data: event.data }))
      for (const e of item.errors ?? []) problems.push(`${at}: ${e.instancePath || 'event'} ${e.message}`);
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      problems.push(`${at}: data is not JSON: ${event.data.slice(0, 200)}`);
      continue;
    }
    const validate = validatorAt(`/components/schemas/${branch.dataSchema}`);
    if (!validate(data))
      for (const e of validate.errors ?? [])
        problems.push(
          `${at}: data${e.instancePath} ${e.message} ${JSON.stringify(e.params)} (${branch.dataSchema})`,
        );
  }
  return problems;
}

/** Parses a whole stream given as text (a mock's, which ends). */
export function parseStream(text: string): ReadStream {
  const read: ReadStream = { events: [], comments: [], closed: true };
  const parser = createParser({
    onEvent: (event) => read.events.push(event),
    onComment: (comment) => read.comments.push(comment.trim()),
  });
  parser.feed(text);
  return read;
}
