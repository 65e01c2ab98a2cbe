// The tools of the spec's stream operations (`stream_operation_output`, `stream_workspace_events`): a
// tool call cannot hold a stream open, so each call reads a window of it, the events after a cursor
// that are there now or come within a short wait, and returns the cursor to read on from. The stream
// itself is `@svc/client/streams`' (resumed across drops, token renewed, unknown events skipped).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SvcClient } from '@svc/client';
import { StreamEndedError, stream } from '@svc/client/streams';
import type { StreamOperationId } from '@svc/contract';
import type { JsonSchema } from './schema.js';
import type { ToolDefinition } from './tools.js';

/** The bounds of one read, stated in the tools' descriptions. */
export const STREAM_LIMITS = {
  /** `wait_seconds`: how long a read waits for its first event. */
  waitSeconds: { default: 5, max: 30 },
  /** `max_events`: events per read. */
  maxEvents: { default: 100, max: 500 },
  /** Once an event came, the read returns when no other comes for this long. */
  quietMs: 500,
  /** Characters of events (as JSON) per read, at most: a command's output is up to 2 × 256 KiB. */
  maxChars: 200_000,
} as const;

/** The inputs a stream tool adds to its operation's (which give the path and `after`). */
export const STREAM_INPUTS: Record<string, JsonSchema> = {
  wait_seconds: {
    type: 'integer',
    minimum: 0,
    maximum: STREAM_LIMITS.waitSeconds.max,
    default: STREAM_LIMITS.waitSeconds.default,
    description: 'How long to wait for the first event when none is there yet.',
  },
  max_events: {
    type: 'integer',
    minimum: 1,
    maximum: STREAM_LIMITS.maxEvents.max,
    default: STREAM_LIMITS.maxEvents.default,
    description: 'Most events to return.',
  },
};

/** What a stream tool returns. */
export const STREAM_OUTPUT: JsonSchema & { type: 'object' } = {
  type: 'object',
  required: ['events', 'next_cursor', 'ended'],
  properties: {
    events: {
      type: 'array',
      description: 'After the cursor, in order; `data` has the schema its `event` names.',
      items: {
        type: 'object',
        required: ['event', 'id', 'data'],
        properties: { event: { type: 'string' }, id: { type: 'string' }, data: { type: 'object' } },
      },
    },
    next_cursor: {
      type: ['string', 'null'],
      description: '`after` of the next read.',
    },
    ended: {
      type: 'boolean',
      description: 'No event will follow.',
    },
    ended_reason: { type: 'string', description: 'Why the server ended it.' },
  },
};

/**
 * The limits of a stream tool, appended to its operation's description.
 *
 * @example
 * streamDescription(); // 'Reads a window of the stream: …'
 */
export function streamDescription(): string {
  const { waitSeconds, maxEvents, quietMs, maxChars } = STREAM_LIMITS;
  return (
    'Reads a window of the stream: the events after `after` that are there now, or that come within ' +
    `\`wait_seconds\` (default ${waitSeconds.default}, at most ${waitSeconds.max}) when none is there yet; it returns ` +
    `${quietMs} ms after the last event, at \`max_events\` (default ${maxEvents.default}, at most ${maxEvents.max}) or about ` +
    `${maxChars.toLocaleString('en')} characters of events. Call again with \`after\` = \`next_cursor\` to read on, until \`ended\`. ` +
    'Event names added to the API later are skipped.'
  );
}

/** Events of one read, and how it stopped. */
interface Window {
  events: { event: string; id: string; data: unknown }[];
  next_cursor: string | null;
  ended: boolean;
  ended_reason?: string;
}

/** One line for the model: how many events, and for a command's output how much of each stream and how it ended. */
function note(window: Window, commandOutput: boolean): string {
  const parts = [`${window.events.length} events`];
  if (commandOutput) {
    const sizes: Record<string, number> = { stdout: 0, stderr: 0 };
    for (const { event, data } of window.events) {
      const chunk = data as { stream?: string; data?: string; encoding?: string };
      if (event === 'output' && chunk.stream)
        sizes[chunk.stream] =
          (sizes[chunk.stream] ?? 0) +
          Buffer.from(chunk.data ?? '', chunk.encoding === 'base64' ? 'base64' : 'utf8').length;
    }
    parts.push(`stdout ${sizes.stdout} bytes, stderr ${sizes.stderr} bytes`);
    const last = window.events.at(-1);
    if (last?.event === 'exit') parts.push(`exit code ${(last.data as { exit_code: number }).exit_code}`);
    if (last?.event === 'failed') parts.push(`failed: ${(last.data as { message?: string }).message}`);
  }
  parts.push(
    window.ended
      ? `ended${window.ended_reason ? ` (${window.ended_reason})` : ''}`
      : `next_cursor ${JSON.stringify(window.next_cursor)}`,
  );
  return `${parts.join('; ')}.`;
}

/**
 * Reads one window of a stream tool's operation ({@link streamDescription}). An API refusal before the
 * stream starts is thrown (`ApiError`), as a plain call's is; the caller's abort is thrown too.
 *
 * @example
 * const result = await readWindow(client, tool, { operation: '01m6…', after: '12' }, signal);
 */
export async function readWindow(
  client: SvcClient,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const path: Record<string, unknown> = {};
  for (const [name, target] of Object.entries(tool.targets))
    if (target.in === 'path' && args[name] !== undefined) path[target.name] = args[name];
  const after = typeof args.after === 'string' ? args.after : undefined;
  const waitMs = Number(args.wait_seconds ?? STREAM_LIMITS.waitSeconds.default) * 1000;
  const maxEvents = Number(args.max_events ?? STREAM_LIMITS.maxEvents.default);
  const window: Window = { events: [], next_cursor: after ?? null, ended: false };
  const closed = new AbortController();
  let timer = setTimeout(() => closed.abort(), waitMs);
  let chars = 0;
  let full = false;
  try {
    const events = stream(client, tool.operation.operationId as StreamOperationId, {
      path: path as never,
      // The cursor as Last-Event-ID: the client sends it again, moved on, if the connection drops.
      lastEventId: after,
      signal: AbortSignal.any([signal, closed.signal]),
      maxReconnects: 2,
    });
    for await (const event of events as AsyncIterable<Window['events'][number]>) {
      window.events.push(event);
      window.next_cursor = event.id;
      chars += JSON.stringify(event).length;
      if (window.events.length >= maxEvents || chars >= STREAM_LIMITS.maxChars) {
        full = true;
        break;
      }
      clearTimeout(timer);
      timer = setTimeout(() => closed.abort(), STREAM_LIMITS.quietMs);
    }
    // The iterator returned by itself: it read the stream's final event.
    if (!full) window.ended = true;
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof StreamEndedError) {
      window.ended = true;
      window.ended_reason = error.code;
    } else if (!closed.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  return {
    content: [
      { type: 'text', text: note(window, tool.stream?.commandOutput === true) },
      { type: 'text', text: JSON.stringify(window) },
    ],
    structuredContent: window as unknown as Record<string, unknown>,
  };
}
