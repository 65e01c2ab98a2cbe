import type { Schema } from '@svc/contract';
import type { OutputStream } from './driver.js';
import type { OutputEvent } from './repositories/operation-output.js';

/** The most bytes one `output` event carries (the spec's `OutputChunk`). */
export const MAX_CHUNK_BYTES = 65_536;
/** How long written output waits before it is appended, at most (when less than a chunk is waiting). */
const OUTPUT_FLUSH_MS = 50;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How many bytes at the end of `bytes` are the start of a UTF-8 character that is not complete yet (0
 * when none): they wait for the rest, so a chunk never splits a character.
 *
 * @example
 * incompleteTail(new Uint8Array([0x61, 0xe2, 0x82])); // 2: "€" is e2 82 ac
 */
export function incompleteTail(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const length =
      byte >= 0xf0 && byte <= 0xf4
        ? 4
        : byte >= 0xe0 && byte <= 0xef
          ? 3
          : byte >= 0xc2 && byte <= 0xdf
            ? 2
            : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/**
 * One `output` event's data: text when the bytes are UTF-8 without NUL, else base64 (the spec's
 * `OutputChunk`; each chunk decides for itself).
 *
 * @example
 * outputChunk('stdout', 0, new TextEncoder().encode('hi\n')); // { stream: 'stdout', offset: 0, encoding: 'utf-8', data: 'hi\n' }
 */
export function outputChunk(stream: OutputStream, offset: number, bytes: Uint8Array): Schema<'OutputChunk'> {
  try {
    const text = strictUtf8.decode(bytes);
    if (!text.includes('\0')) return { stream, offset, encoding: 'utf-8', data: text };
  } catch {
    // not UTF-8: base64 below
  }
  return { stream, offset, encoding: 'base64', data: Buffer.from(bytes).toString('base64') };
}

/** Where to cut `bytes` for a chunk of at most `max` bytes without splitting a UTF-8 character. */
function cutAt(bytes: Uint8Array, max: number): number {
  if (bytes.length <= max) return bytes.length;
  const cut = max - incompleteTail(bytes.subarray(0, max));
  return cut > 0 ? cut : max;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

export interface OutputLogOptions {
  /** Appends events to the log; false when the claim no longer holds the operation (nothing written). */
  append(events: OutputEvent[]): Promise<boolean>;
  /** The command's cap per stream (`max_output_bytes`): bytes past it are not the result's, never logged. */
  maxBytes: number;
  flushMs?: number;
}

/**
 * A command's output on its way to the output log (design §14): `write` takes what the driver hands
 * over and never waits; the bytes are appended as chunks (at most {@link MAX_CHUNK_BYTES}, never
 * splitting a UTF-8 character, each stream's `offset` counted) at most {@link OUTPUT_FLUSH_MS} after
 * they were written, or at once when a chunk's worth waits. One append is in flight at a time: a slow
 * database delays the log, never the command, and what waits meanwhile is bounded by the cap on each
 * stream (`maxBytes`). An append that fails is tried again with the next. `finish` hands back what
 * is not appended yet, for the transaction that ends the operation.
 *
 * @example
 * const log = new OutputLog({ append: (events) => appendOperationOutput(db, id, token, events), maxBytes });
 * await driver.exec(computer, { ...request, onOutput: log.write });
 * await endOperation(db, id, token, { ...end, output: [...(await log.finish()), final] });
 */
export class OutputLog {
  private readonly options: OutputLogOptions;
  /** Written and not yet cut into chunks, in the order written (adjacent writes of a stream joined). */
  private written: { stream: OutputStream; bytes: Uint8Array }[] = [];
  private waiting = 0;
  /** Chunks cut, not yet appended (an append failed, or one is being made). */
  private unsent: OutputEvent[] = [];
  /** The start of a character whose rest has not been written yet, per stream. */
  private readonly carry: Record<OutputStream, Uint8Array> = {
    stdout: new Uint8Array(),
    stderr: new Uint8Array(),
  };
  private readonly offset: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  private readonly received: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private done = false;
  /** The claim was lost: nothing more is written. */
  lost = false;

  constructor(options: OutputLogOptions) {
    this.options = options;
  }

  /** Takes bytes the command wrote (a copy is kept); never waits. */
  readonly write = (stream: OutputStream, bytes: Uint8Array): void => {
    if (this.done || this.lost) return;
    const room = this.options.maxBytes - this.received[stream];
    if (room <= 0 || bytes.length === 0) return;
    const kept = bytes.slice(0, room);
    this.received[stream] += kept.length;
    const last = this.written.at(-1);
    if (last?.stream === stream) last.bytes = concat(last.bytes, kept);
    else this.written.push({ stream, bytes: kept });
    this.waiting += kept.length;
    if (this.waiting >= MAX_CHUNK_BYTES) this.flushSoon(0);
    else this.flushSoon(this.options.flushMs ?? OUTPUT_FLUSH_MS);
  };

  /**
   * Stops taking output and hands back every chunk not yet appended (an append in flight is waited
   * for first, so the log's sequences stay in order), the last characters' bytes included.
   */
  async finish(): Promise<OutputEvent[]> {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    const rest = [...this.unsent, ...this.cut(true)];
    this.unsent = [];
    return this.lost ? [] : rest;
  }

  /** Stops at once, appending nothing more (the run was abandoned). */
  discard(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flushSoon(ms: number): void {
    if (this.inFlight) return; // the append in flight schedules the next when it ends
    if (this.timer && ms > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), ms);
  }

  private flush(): void {
    this.timer = undefined;
    if (this.done || this.lost) return;
    const events = [...this.unsent, ...this.cut(false)];
    if (events.length === 0) return;
    this.unsent = events;
    this.inFlight = this.options
      .append(events)
      .then(
        (owned) => {
          this.unsent = this.unsent.slice(events.length);
          if (!owned) this.lost = true;
        },
        () => {}, // kept in `unsent`: tried again with the next append
      )
      .finally(() => {
        this.inFlight = undefined;
        if (this.waiting > 0 || this.unsent.length > 0)
          this.flushSoon(this.waiting >= MAX_CHUNK_BYTES ? 0 : (this.options.flushMs ?? OUTPUT_FLUSH_MS));
      });
  }

  /**
   * Cuts what was written into chunks. An unfinished character waits in `carry`, to be joined by its
   * stream's next write (also a later one in this same cut: writes of the two streams may alternate
   * inside a character); with `final`, what is still unfinished at the end is emitted as it is.
   */
  private cut(final: boolean): OutputEvent[] {
    const events: OutputEvent[] = [];
    const emit = (stream: OutputStream, bytes: Uint8Array) => {
      let rest = bytes;
      while (rest.length > 0) {
        const size = cutAt(rest, MAX_CHUNK_BYTES);
        events.push({
          event: 'output',
          data: outputChunk(stream, this.offset[stream], rest.subarray(0, size)),
        });
        this.offset[stream] += size;
        rest = rest.subarray(size);
      }
    };
    for (const { stream, bytes } of this.written) {
      let all = concat(this.carry[stream], bytes);
      const tail = incompleteTail(all);
      this.carry[stream] = all.slice(all.length - tail);
      all = all.subarray(0, all.length - tail);
      emit(stream, all);
    }
    this.written = [];
    this.waiting = 0;
    if (final) {
      for (const stream of ['stdout', 'stderr'] as const) {
        emit(stream, this.carry[stream]);
        this.carry[stream] = new Uint8Array();
      }
    }
    return events;
  }
}
