import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import { nodeBackedStream, takeNodeStream } from '../node-bytes.js';

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
    return nodeBackedStream(
      () =>
        new CountedIncoming(
          source,
          this.limitBytes,
          (chunk) => this.#count_(chunk),
          () => {
            this.#ended = true;
          },
        ),
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

/** The body of each response made by {@link bytesResponse}, for the Node adapter. */
const bytesOfResponses = new WeakMap<Response, ReadableStream<Uint8Array>>();

/**
 * The response of a handler's bytes: `body.stream` with `init`'s status and headers, remembered so
 * that the Node adapter can take the Node stream under it ({@link nodeBodyOf}).
 *
 * @example
 * return bytesResponse(outgoingBytes(stream, 'application/octet-stream', 5), { status: 200, headers });
 */
export function bytesResponse(body: OutgoingBytes, init: ResponseInit): Response {
  const response = new Response(body.stream, init);
  bytesOfResponses.set(response, body.stream);
  return response;
}

/**
 * The Node stream under a response of {@link bytesResponse} whose body is node-backed and unread
 * (taken: the response's own body must not be read then); undefined for any other response.
 *
 * @example
 * const node = nodeBodyOf(response);
 * if (node) pipeline(node, outgoing, () => {});
 */
export function nodeBodyOf(response: Response): Readable | undefined {
  const stream = bytesOfResponses.get(response);
  return stream && takeNodeStream(stream);
}

/**
 * The Node request's bytes as a Node stream of their own, counted (and hashed) by `count` as they
 * pass, read ahead up to {@link INCOMING_BUFFER_BYTES}. Past the limit (`count` is false) it fails with
 * {@link BodyTooLargeError} and leaves the request paused, unread, so that the 413 can still be
 * answered on its connection; destroyed by its reader otherwise, it destroys the request.
 */
class CountedIncoming extends Readable {
  readonly #source: Readable;
  readonly #limitBytes: number;
  readonly #count: (chunk: Buffer) => boolean;
  readonly #onEnded: () => void;
  #settled = false;
  #listening = false;

  constructor(source: Readable, limitBytes: number, count: (chunk: Buffer) => boolean, onEnded: () => void) {
    super({ highWaterMark: INCOMING_BUFFER_BYTES });
    this.#source = source;
    this.#limitBytes = limitBytes;
    this.#count = count;
    this.#onEnded = onEnded;
  }

  override _read(): void {
    if (this.#settled) return;
    if (!this.#listening) {
      this.#listening = true;
      this.#source.on('data', this.#onData);
      this.#source.once('end', this.#onEnd);
      this.#source.once('error', this.#onError);
      this.#source.once('close', this.#onClose);
    }
    this.#source.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#settle()) this.#source.destroy(error ?? undefined);
    callback(error);
  }

  /** Stops listening (the request paused); true the first time. */
  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#source.off('data', this.#onData);
    this.#source.off('end', this.#onEnd);
    this.#source.off('error', this.#onError);
    this.#source.off('close', this.#onClose);
    return true;
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#settled) return;
    if (!this.#count(chunk)) {
      this.#settle();
      this.#source.pause();
      this.destroy(new BodyTooLargeError(this.#limitBytes));
      return;
    }
    if (!this.push(chunk)) this.#source.pause();
    // Someone else resumed the request (the adapter drains an unread body after the answer): this
    // stream, read by nobody, stops taking its bytes.
    if (this.readableLength > 2 * INCOMING_BUFFER_BYTES) {
      this.#settle();
      this.destroy(new Error('the request body was left unread'));
    }
  };

  readonly #onEnd = (): void => {
    if (!this.#settle()) return;
    this.#onEnded();
    this.push(null);
  };

  readonly #onError = (error: Error): void => {
    if (!this.#settle()) return;
    this.destroy(error);
  };

  readonly #onClose = (): void => {
    if (!this.#settle()) return;
    this.destroy(new Error('the request body was cut short'));
  };
}
