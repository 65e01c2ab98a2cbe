import type { ByteBodyInput } from '@svc/contract';

/**
 * What an upload takes: what the generated types take for a byte body (`ByteBodyInput`: a Blob or
 * File, a web `ReadableStream`, bytes), and also any async iterable of bytes (a Node `Readable`) or a
 * string (sent as UTF-8).
 *
 * @example
 * import type { ByteSource } from '@svc/client/files';
 * const source: ByteSource = new Blob(['hello']);
 */
export type ByteSource = ByteBodyInput | AsyncIterable<Uint8Array | string> | string;

/**
 * How far an upload is: bytes handed to the connection, and the total when known.
 *
 * @example
 * import type { Progress } from '@svc/client/files';
 * const percent = (p: Progress) => (p.total ? Math.floor((100 * p.sent) / p.total) : undefined);
 */
export interface Progress {
  sent: number;
  total: number | undefined;
}

/** The largest piece bytes in memory are sent in, so progress moves on a large buffer too. */
const PIECE = 1024 * 1024;

type Next = () => Promise<Uint8Array | undefined>;

function readerOf(stream: ReadableStream<Uint8Array>): { next: Next; cancel: (reason: unknown) => unknown } {
  const reader = stream.getReader();
  return {
    next: async () => {
      const { done, value } = await reader.read();
      return done ? undefined : value;
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

function iterableOf(source: AsyncIterable<Uint8Array | string>): {
  next: Next;
  cancel: (reason: unknown) => unknown;
} {
  const iterator = source[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return {
    next: async () => {
      const { done, value } = await iterator.next();
      if (done) return undefined;
      return typeof value === 'string' ? encoder.encode(value) : value;
    },
    cancel: (reason) => iterator.return?.(reason),
  };
}

function bytesOf(bytes: Uint8Array): { next: Next; cancel: () => void } {
  let offset = 0;
  return {
    next: async () => {
      if (offset >= bytes.byteLength) return undefined;
      const piece = bytes.subarray(offset, offset + PIECE);
      offset += piece.byteLength;
      return piece;
    },
    cancel: () => {},
  };
}

/**
 * The body of an upload as a pull stream: a chunk is read from the source only when the connection
 * asks for one (high-water mark 0), so a large source is never held whole. `size` is the length when
 * the source says it (or the caller did), for `Content-Length`.
 *
 * @example
 * const { stream, size } = bodyStream('hello', {}); // size 5
 */
export function bodyStream(
  source: ByteSource,
  options: { size?: number | undefined; onProgress?: ((progress: Progress) => void) | undefined },
): { stream: ReadableStream<Uint8Array>; size: number | undefined } {
  let size = options.size;
  let reader: { next: Next; cancel: (reason: unknown) => unknown };
  if (typeof source === 'string') {
    const bytes = new TextEncoder().encode(source);
    size = bytes.byteLength;
    reader = bytesOf(bytes);
  } else if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    const bytes = source instanceof Uint8Array ? source : new Uint8Array(source);
    size = bytes.byteLength;
    reader = bytesOf(bytes);
  } else if (source instanceof Blob) {
    size = source.size;
    reader = readerOf(source.stream());
  } else if (source instanceof ReadableStream) reader = readerOf(source);
  else if (Symbol.asyncIterator in source) reader = iterableOf(source);
  else
    throw new TypeError('upload body: give a Blob, a ReadableStream, an async iterable, bytes or a string');
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk = await reader.next();
        // An empty chunk is skipped here: a pull that enqueues nothing is not called again.
        while (chunk?.byteLength === 0) chunk = await reader.next();
        if (chunk === undefined) {
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.byteLength;
        options.onProgress?.({ sent, total: size });
      },
      cancel: (reason) => reader.cancel(reason) as Promise<void> | undefined,
    },
    { highWaterMark: 0 },
  );
  return { stream, size };
}
