import { Readable } from 'node:stream';
import { tooLarge } from './driver.js';
import { fileBytesMoved } from './heap.js';

/**
 * A Node stream of a web stream's bytes, for the libraries that speak Node streams (tar-stream,
 * dockerode). Backpressure carries through.
 */
export function nodeReadable(body: ReadableStream<Uint8Array>): Readable {
  return Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
}

/** A web stream of a Node stream's (or async iterable's) bytes, for the HTTP side. */
export function webReadable(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const readable = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  const web = Readable.toWeb(readable) as unknown as ReadableStream<Uint8Array>;
  // Beside toWeb's own listener, which pauses and resumes the source: this one only counts.
  readable.on('data', (chunk: Uint8Array) => fileBytesMoved(chunk.length));
  return web;
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
    fileBytesMoved(chunk.length);
    if (total > options.maxBytes) throw tooLarge(options.maxBytes);
    options.onBytes?.(total);
    yield chunk;
  }
  throwIfAborted(options.signal);
}
