const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A JSON body serialized once, kept as its UTF-8 bytes: an answer that many requests share (a cached
 * list page) is rendered and stringified once, and every response that answers it sends the same
 * bytes `JSON.stringify(value)` would have made, with no work per request. `T` is the value's type,
 * so a handler's reply is still checked against the spec's body. Anything that serializes it again
 * (an idempotency record) gets the value back through {@link JsonBytes.toJSON}.
 *
 * @example
 * const body = JsonBytes.of({ computers: [], next_cursor: null, has_more: false });
 * return { status: 200, body }; // ctx.json sends body.bytes
 */
export class JsonBytes<T> {
  /** `JSON.stringify(value)` as UTF-8; never written to (responses share it). */
  readonly bytes: Uint8Array<ArrayBuffer>;
  /** For the type only (never set): what the bytes are the JSON of. */
  declare readonly shape?: T;

  private constructor(bytes: Uint8Array<ArrayBuffer>) {
    this.bytes = bytes;
  }

  /** Serializes `value` now. */
  static of<T>(value: T): JsonBytes<T> {
    return new JsonBytes<T>(encoder.encode(JSON.stringify(value)));
  }

  /** The value again, for a `JSON.stringify` of the body (the bytes are its JSON). */
  toJSON(): T {
    return JSON.parse(decoder.decode(this.bytes)) as T;
  }
}
