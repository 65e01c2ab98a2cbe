import { Readable } from 'node:stream';
import { nodeBackedStream, takeNodeStream } from '../node-bytes.js';
import { tooLarge } from './driver.js';

/**
 * A Node stream of a web stream's bytes, for the libraries that speak Node streams (tar-stream,
 * dockerode, the Engine's request). Backpressure carries through. A node-backed stream (an upload's
 * body, see `nodeBackedStream`) gives its Node stream itself, past the web-stream layer.
 */
export function nodeReadable(body: ReadableStream<Uint8Array>): Readable {
  return (
    takeNodeStream(body) ?? Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>)
  );
}

/**
 * A web stream of a Node stream's (or async iterable's) bytes, for the HTTP side: node-backed (see
 * `nodeBackedStream`), so the Node adapter writes the Node stream straight into the response.
 */
export function webReadable(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const readable = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  return nodeBackedStream(() => readable);
}

/** The error an aborted files operation fails with: the signal's reason, as `fetch` does. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Throws the signal's reason when it is aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortReason(signal);
}

/**
 * Yields `source`'s chunks, counting them: past `maxBytes` it throws `too_large`, and `onBytes` (a
 * quota check) may throw too. Never holds more than one chunk.
 *
 * @example
 * for await (const chunk of counted(body, { maxBytes, signal })) sink.write(chunk);
 */
export async function* counted(
  source: AsyncIterable<Uint8Array>,
  options: { maxBytes: number; signal: AbortSignal; onBytes?: (total: number) => void },
): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of source) {
    throwIfAborted(options.signal);
    total += chunk.length;
    if (total > options.maxBytes) throw tooLarge(options.maxBytes);
    options.onBytes?.(total);
    yield chunk;
  }
  throwIfAborted(options.signal);
}
