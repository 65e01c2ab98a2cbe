import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';

/** How many bytes of a request body are read ahead of the handler, at most (plus one socket read). */
export const INCOMING_BUFFER_BYTES = 1024 * 1024;

/**
 * A request body of bytes (a file, a tar archive), handed to the handler as it streams in, never
 * buffered whole: `stream` counts what passes and errors once the count goes past `limitBytes`
 * (`overLimit` is then true, and the handler answers 413). Once {@link hashBytes} is called (before
 * anything is read: an upload with an Idempotency-Key) it also hashes the bytes on the way (SHA-256),
 * so an idempotent upload is fingerprinted by its bytes without holding them (design §10); without
 * a key, nothing is hashed.
 *
 * The source is the web stream of the `Request`, or better the Node request itself (the adapter's
 * `IncomingMessage`): then `stream` is one web stream over it, read ahead up to
 * {@link INCOMING_BUFFER_BYTES}, instead of a chain of conversions that hand on one small chunk at a time.
 *
 * @example
 * const body = new IncomingBytes(request.body, 1024);
 * body.hashBytes();
 * await body.stream.pipeTo(sink);
 * body.sha256(); // hex, once the stream has ended
 */
export class IncomingBytes {
  /** The most bytes the body may carry (the spec's `x-svc-max-bytes`, or the server's lower setting). */
  readonly limitBytes: number;
  /** `Content-Length` when the client sent one (already checked against `limitBytes`). */
  readonly declaredLength: number | undefined;
  #count = 0;
  #overLimit = false;
  #ended = false;
  #digest: string | undefined;
  #hash: Hash | undefined;
  readonly #source: ReadableStream<Uint8Array> | Readable | null;
  #stream: ReadableStream<Uint8Array> | undefined;

  constructor(
    source: ReadableStream<Uint8Array> | Readable | null,
    limitBytes: number,
    declaredLength?: number,
  ) {
    this.limitBytes = limitBytes;
    this.declaredLength = declaredLength;
    this.#source = source;
  }

  /**
   * The body's bytes; read it once. Made on first use, so nothing is read (or counted) before:
   * {@link hashBytes} may be called until then.
   */
  get stream(): ReadableStream<Uint8Array> {
    this.#stream ??= this.#open(this.#source);
    return this.#stream;
  }

  #open(source: ReadableStream<Uint8Array> | Readable | null): ReadableStream<Uint8Array> {
    if (source instanceof Readable) return this.#fromNode(source);
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        if (!this.#count_(chunk)) {
          controller.error(new BodyTooLargeError(this.limitBytes));
          return;
        }
        controller.enqueue(chunk);
      },
      flush: () => {
        this.#ended = true;
      },
    });
    const empty = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    return (source ?? empty).pipeThrough(counter);
  }

  /** Counts (and hashes) a chunk; false once past the limit. */
  #count_(chunk: Uint8Array): boolean {
    this.#count += chunk.byteLength;
    if (this.#count > this.limitBytes) {
      this.#overLimit = true;
      return false;
    }
    this.#hash?.update(chunk);
    return true;
  }

  #fromNode(source: Readable): ReadableStream<Uint8Array> {
    let settled = false;
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          source.on('data', (chunk: Buffer) => {
            if (settled) return;
            if (!this.#count_(chunk)) {
              settled = true;
              source.pause();
              controller.error(new BodyTooLargeError(this.limitBytes));
              return;
            }
            controller.enqueue(chunk);
            const desired = controller.desiredSize ?? 0;
            if (desired <= 0) source.pause();
            // Someone else resumed the request (the adapter drains an unread body after the answer):
            // this stream, read by nobody, stops taking its bytes.
            if (desired < -INCOMING_BUFFER_BYTES) {
              settled = true;
              controller.error(new Error('the request body was left unread'));
            }
          });
          source.once('end', () => {
            if (settled) return;
            settled = true;
            this.#ended = true;
            controller.close();
          });
          source.once('error', (error) => {
            if (settled) return;
            settled = true;
            controller.error(error);
          });
          source.once('close', () => {
            if (settled) return;
            settled = true;
            controller.error(new Error('the request body was cut short'));
          });
        },
        pull: () => {
          if (!settled) source.resume();
        },
        cancel: () => {
          // Not destroyed: a destroyed request takes its socket, and the answer with it (the client,
          // still sending, would get a reset instead of the refusal). What it still sends is read and
          // dropped until the answer is out; then the adapter drains the rest, and a connection closed
          // after it lingers (linger.ts).
          settled = true;
          source.resume();
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: INCOMING_BUFFER_BYTES }),
    );
  }

  /**
   * Hashes the body's bytes (SHA-256, see {@link sha256}); call it before {@link stream} is first used.
   * Only an upload with an Idempotency-Key needs the hash.
   */
  hashBytes(): void {
    if (this.#hash) return;
    if (this.#stream) throw new Error('the body is being read already: too late to hash it');
    this.#hash = createHash('sha256');
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

  /** The SHA-256 of the whole body (hex); only once {@link ended}, and when {@link hashBytes} was called. */
  sha256(): string {
    if (!this.#ended) throw new Error('the body has not been read to its end');
    if (!this.#hash) throw new Error('the body was not hashed: call hashBytes() before reading it');
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
