import type { Schema } from '@svc/contract';
import type { EventWriter, ServerSentEvent } from '../http/sse.js';
import { type OpenStream, POLL_MS, RECHECK_MS, RETRY_MS, type Streams } from './registry.js';
import type { Wakeups } from './wakeups.js';

/** How long the last event (`stream.ended`) may wait for a slow client before the response is cut. */
const LAST_WRITE_MS = 1000;
/** The least time between two checks of the caller's access (each a read of the database). */
const ACCESS_CHECK_MS = 200;

/** What `stream.ended` says for each reason this server ends a stream with (the spec's `StreamEnded`). */
export const ENDED = {
  token_expired: {
    reason: 'token_expired',
    reconnect: true,
    message: 'The access token expired; reconnect with a new one and Last-Event-ID to resume.',
  },
  access_revoked: {
    reason: 'access_revoked',
    reconnect: false,
    message: 'Access to this stream was revoked (token, membership or role); do not reconnect with it.',
  },
  cursor_expired: {
    reason: 'cursor_expired',
    reconnect: false,
    message:
      'The log no longer keeps the events after Last-Event-ID (or after, or the last event sent); re-read state with the API and reconnect without it.',
  },
  shutting_down: {
    reason: 'shutting_down',
    reconnect: true,
    message: 'The server is shutting down; reconnect with Last-Event-ID to resume on another one.',
  },
} as const satisfies Record<string, Schema<'StreamEnded'>>;

/** Why the server ends a stream (a `StreamEnded.reason`). */
export type EndReason = keyof typeof ENDED;

/** One read of a stream's log: the events to send (already filtered), and how far it read. */
export interface Batch {
  events: ServerSentEvent[];
  /** The id read up to (the last event's, sent or filtered out); the cursor of the next read. */
  last: number;
  /** The last event of the stream was read (a command's `exit` or `failed`): the stream ends after it. */
  final: boolean;
  /** The read was cut at its limit: read again at once. */
  more: boolean;
  /**
   * The log no longer keeps the event right after the cursor: it dropped events while this reader was
   * behind. Nothing of the batch is sent; the stream ends (`cursor_expired`) with the cursor as its id,
   * so the reader knows what it has and that what came next is lost, never a silent gap.
   */
  expired?: boolean;
}

/** What {@link follow} needs of one stream. */
export interface Following {
  writer: EventWriter;
  streams: Streams;
  /** This stream's slot (told when the replica drains; given back when the stream ends). */
  slot: OpenStream;
  wakeups: Wakeups;
  /** The key of `wakeups` that announces new events of this stream. */
  key: string;
  /** The id of the last event the client has; 0 for none. */
  after: number;
  /** When the caller's access token expires (milliseconds since the epoch, `streams.now`'s clock). */
  expiresAt: number;
  /** An end known before anything is read (a cursor older than the log keeps). */
  endAtOnce?: EndReason | undefined;
  read(after: number): Promise<Batch>;
  /** Told before each event is written to the client, and when it has been (a reader's pace). */
  sending?: () => void;
  sent?: (event: ServerSentEvent) => void;
  /** Whether the caller may still read the stream (token, principal, membership, role): `false` ends it. */
  allowed(): Promise<boolean>;
}

/**
 * Follows one stream's log until it is over: sends the events after the cursor, then waits for a
 * wake-up of its key, and reads again (at least every {@link POLL_MS}, should a notification be lost).
 * On wake-ups (at most every {@link ACCESS_CHECK_MS}) and at least every {@link RECHECK_MS} it
 * re-checks the caller's access, so a revoked token, a removed member or a lowered role ends the
 * stream within a second (`access_revoked`); the token's `exp` ends it at once (`token_expired`),
 * and so does the replica's drain (`shutting_down`), each with a last `stream.ended` event whose `id`
 * is the last id sent (or the cursor given). A read that finds the log dropped what came after the
 * cursor ends it there (`cursor_expired`). A comment line every `streams.keepaliveMs` keeps an idle
 * connection open. The client's leaving stops everything at once; whatever way it ends, no timer,
 * subscription or slot is left behind.
 *
 * @example
 * await follow({ writer, streams, slot, wakeups, key: workspace.id, after: 0, expiresAt, read, allowed });
 */
export async function follow(options: Following): Promise<void> {
  const { writer, streams, slot, wakeups } = options;
  const { signal } = writer;
  let cursor = options.after;
  let kick: () => void = () => {};
  const interrupt = () => kick();
  let drainCut: NodeJS.Timeout | undefined;
  const stopDrain = slot.onEnd(() => {
    interrupt();
    // A stream stuck writing to a client that stopped reading must not hold the drain up.
    drainCut = setTimeout(() => writer.abort(), LAST_WRITE_MS);
  });
  signal.addEventListener('abort', interrupt);
  // Capped: setTimeout fires at once past 2^31 - 1 ms (tokens live minutes; the checks cover the rest).
  const expiry = setTimeout(interrupt, Math.min(2 ** 31 - 1, Math.max(0, options.expiresAt - streams.now())));
  const keepalive = setInterval(() => void writer.comment('keepalive'), streams.keepaliveMs);
  let subscription: { woken: Promise<void>; cancel: () => void } | undefined;
  let pause: NodeJS.Timeout | undefined;
  // The last event gets a second to leave; a client that stopped reading is cut off after it.
  const end = async (reason: EndReason) => {
    const cut = setTimeout(() => writer.abort(), LAST_WRITE_MS);
    try {
      await writer.send({ event: 'stream.ended', id: String(cursor), data: ENDED[reason], retry: RETRY_MS });
    } finally {
      clearTimeout(cut);
    }
  };
  try {
    if (options.endAtOnce) return await end(options.endAtOnce);
    let woken = true;
    let lastRead = Number.NEGATIVE_INFINITY;
    let checked = Number.NEGATIVE_INFINITY;
    for (;;) {
      // Whatever interrupts from here on resolves `interrupted`; what came before shows in the checks.
      const interrupted = new Promise<void>((resolve) => {
        kick = resolve;
      });
      if (signal.aborted) return;
      if (slot.ended) return await end('shutting_down');
      if (streams.now() >= options.expiresAt) return await end('token_expired');
      // Subscribed before reading, so an event written between the read and the wait wakes it.
      subscription = wakeups.next(options.key);
      // A busy stream (a terminal's echo after every keystroke) asks at most every ACCESS_CHECK_MS.
      if (performance.now() - checked >= ACCESS_CHECK_MS) {
        if (!(await options.allowed())) return await end('access_revoked');
        checked = performance.now();
      }
      if (woken || performance.now() - lastRead >= POLL_MS) {
        woken = false;
        lastRead = performance.now();
        const batch = await options.read(cursor);
        if (batch.expired) return await end('cursor_expired');
        for (const event of batch.events) {
          if (signal.aborted) return;
          options.sending?.();
          await writer.send(event);
          options.sent?.(event);
        }
        cursor = batch.last;
        if (batch.final) return;
        if (batch.more) {
          woken = true;
          subscription.cancel();
          continue;
        }
      }
      const why = await Promise.race([
        interrupted.then(() => 'interrupted' as const),
        subscription.woken.then(() => 'woken' as const),
        new Promise<'recheck'>((resolve) => {
          pause = setTimeout(() => resolve('recheck'), RECHECK_MS);
        }),
      ]);
      clearTimeout(pause);
      if (why === 'woken') woken = true;
      subscription.cancel();
    }
  } finally {
    clearTimeout(expiry);
    clearTimeout(drainCut);
    clearTimeout(pause);
    clearInterval(keepalive);
    subscription?.cancel();
    stopDrain();
    signal.removeEventListener('abort', interrupt);
    slot.close();
  }
}
