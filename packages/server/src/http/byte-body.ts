import { createHash } from 'node:crypto';

/**
 * A request body of bytes (a file, a tar archive), handed to the handler as it streams in, never
 * buffered whole: `stream` counts what passes and errors once the count goes past `limitBytes`
 * (`overLimit` is then true, and the handler answers 413), and hashes it (SHA-256) on the way, so
 * an idempotent upload is fingerprinted by its bytes without holding them (design §10).
 *
 * @example
 * const body = new IncomingBytes(request.body, 1024);
 * await body.stream.pipeTo(sink);
 * body.sha256(); // hex, once the stream has ended
 */
export class IncomingBytes {
  /** The body's bytes; read it once. */
  readonly stream: ReadableStream<Uint8Array>;
  /** The most bytes the body may carry (the spec's `x-svc-max-bytes`, or the server's lower setting). */
  readonly limitBytes: number;
  /** `Content-Length` when the client sent one (already checked against `limitBytes`). */
  readonly declaredLength: number | undefined;
  #count = 0;
  #overLimit = false;
  #ended = false;
  #digest: string | undefined;
  readonly #hash = createHash('sha256');

  constructor(source: ReadableStream<Uint8Array> | null, limitBytes: number, declaredLength?: number) {
    this.limitBytes = limitBytes;
    this.declaredLength = declaredLength;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        this.#count += chunk.byteLength;
        if (this.#count > limitBytes) {
          this.#overLimit = true;
          controller.error(new BodyTooLargeError(limitBytes));
          return;
        }
        this.#hash.update(chunk);
        controller.enqueue(chunk);
      },
      flush: () => {
        this.#ended = true;
      },
    });
    const empty = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    this.stream = (source ?? empty).pipeThrough(counter);
  }

  /** How many bytes have been read so far. */
  get bytesRead(): number {
    return this.#count;
  }

  /** Whether the body went past {@link limitBytes} (the stream errored). */
  get overLimit(): boolean {
    return this.#overLimit;
  }

  /** Whether the whole body has been read (the stream ended without error). */
  get ended(): boolean {
    return this.#ended;
  }

  /** The SHA-256 of the whole body (hex); only once {@link ended}. */
  sha256(): string {
    if (!this.#ended) throw new Error('the body has not been read to its end');
    this.#digest ??= this.#hash.digest('hex');
    return this.#digest;
  }

  /**
   * Reads what is left of the body and throws it away (counted and hashed all the same), e.g. to
   * fingerprint a retry that will not write; rejects with {@link BodyTooLargeError} past the limit.
   */
  async drain(): Promise<void> {
    if (this.#ended) return;
    const reader = this.stream.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) return;
    }
  }
}

/**
 * What the body's stream errors with once its count passes the limit: the handler answers 413
 * `payload_too_large` with `details.limit_bytes`.
 */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`the body is larger than ${limitBytes} bytes`);
  }
}

/**
 * Whether a handler's `body` is bytes to stream rather than JSON.
 *
 * @example
 * if (isOutgoingBytes(reply.body)) return ctx.bytes(reply.status, reply.body, reply.headers);
 */
export function isOutgoingBytes(body: unknown): body is OutgoingBytes {
  return (body as OutgoingBytes | undefined)?.kind === 'bytes';
}

/**
 * How a handler answers with bytes: the stream (cancelled when the client goes away), its media type
 * and, when known, its length (`Content-Length`).
 */
export interface OutgoingBytes {
  readonly kind: 'bytes';
  readonly stream: ReadableStream<Uint8Array>;
  readonly mediaType: string;
  readonly length?: number;
}

/**
 * Wraps a stream as the body a handler answers.
 *
 * @example
 * return { status: 200, body: outgoingBytes(stream, 'application/octet-stream', size) };
 */
export function outgoingBytes(
  stream: ReadableStream<Uint8Array>,
  mediaType: string,
  length?: number,
): OutgoingBytes {
  return { kind: 'bytes', stream, mediaType, ...(length === undefined ? {} : { length }) };
}
