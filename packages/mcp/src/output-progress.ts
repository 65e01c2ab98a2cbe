// A command run by a long-running tool (`run_computer`), followed while the tool waits for its
// operation: its output, as it comes, in MCP progress notifications, read from the command's output
// stream through `@svc/client/streams`.
import type { SvcClient } from '@svc/client';
import { stream } from '@svc/client/streams';
import type { Schema, StreamOperationId } from '@svc/contract';
import type { ReportProgress } from './progress.js';

/** Characters of output in one notification's `message`, at most (a `[stderr] ` prefix aside). */
export const OUTPUT_MESSAGE_MAX = 4_000;

/** How long the follower may still take once the operation is final: the stream's end is close by. */
export const OUTPUT_GRACE_MS = 2_000;

/** `text` cut into pieces of at most `max` characters, never between the halves of a surrogate pair. */
export function pieces(text: string, max: number): string[] {
  const out: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + max);
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] as string)) end -= 1;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/**
 * Sends a command's output as progress notifications: `message` is the text it wrote (stderr's marked
 * `[stderr] `; bytes that are not UTF-8 are shown as U+FFFD), at most {@link OUTPUT_MESSAGE_MAX}
 * characters per notification, and `progress` the output's size so far in bytes, so it rises with every
 * notification (no `total`: the size is not known ahead). Best effort: the output is in the tool's
 * result too, so a stream that cannot be read sends nothing and fails nothing.
 *
 * @example
 * const follower = followOutput(client, { operationId: 'streamOperationOutput', param: 'operation' }, op.id, report, signal);
 * await waitForOperations(client, [op]);
 * await follower.finish();
 */
export function followOutput(
  client: SvcClient,
  follow: { operationId: string; param: string },
  operation: string,
  report: ReportProgress,
  signal: AbortSignal,
): { finish(): Promise<void> } {
  const stop = new AbortController();
  let sent = 0;
  const done = (async () => {
    const events = stream(client, follow.operationId as StreamOperationId, {
      path: { [follow.param]: operation } as never,
      signal: AbortSignal.any([signal, stop.signal]),
      maxReconnects: 3,
    }) as AsyncIterable<{ event: string; data: unknown }>;
    for await (const { event, data } of events) {
      if (event !== 'output') continue;
      const chunk = data as Schema<'OutputChunk'>;
      const bytes = Buffer.from(chunk.data, chunk.encoding === 'base64' ? 'base64' : 'utf8');
      for (const piece of pieces(new TextDecoder().decode(bytes), OUTPUT_MESSAGE_MAX)) {
        sent += Buffer.byteLength(piece);
        await report(sent, chunk.stream === 'stderr' ? `[stderr] ${piece}` : piece).catch(() => undefined);
      }
    }
  })().catch(() => undefined);
  return {
    async finish() {
      const grace = new Promise((resolve) => setTimeout(resolve, OUTPUT_GRACE_MS).unref?.());
      await Promise.race([done, grace]);
      stop.abort();
      await done;
    },
  };
}
