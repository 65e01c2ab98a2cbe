import type { Readable } from 'node:stream';

/** How each node-backed stream stands: made, or taken (as a Node stream or by its web reader). */
interface Backing {
  open: () => Readable;
  taken: boolean;
}

const backings = new WeakMap<ReadableStream<Uint8Array>, Backing>();

/**
 * A web stream of bytes whose source is a Node stream, made only once someone reads: either a web
 * reader (the stream reads the Node stream made by `open` on its first pull), or a Node consumer that
 * takes the Node stream itself with {@link takeNodeStream} while the web stream is unread, and so
 * skips the web-stream layer (a promise and a queue step per chunk, and the garbage they make). The
 * bytes cross Node's own streams from socket to socket: the Node adapter writes a download straight
 * into the response, the Docker driver an upload straight into the Engine's request. Nothing is read
 * before that; cancelling the web stream unread opens the Node stream and destroys it, so that what
 * it holds (an Engine connection) is released.
 *
 * @example
 * const body = nodeBackedStream(() => createReadStream(file));
 * const node = takeNodeStream(body); // the ReadStream, or undefined once the web stream is read
 */
export function nodeBackedStream(open: () => Readable): ReadableStream<Uint8Array> {
  // A web reader takes the Node stream's chunks one by one as they are (no join, no copy); the Node
  // stream's own high-water mark bounds what it reads ahead.
  let node: Readable | undefined;
  const backing: Backing = { open, taken: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull: (controller) => {
        if (!node) {
          backing.taken = true;
          node = listen(open(), controller);
        }
        node.resume();
      },
      cancel: () => {
        if (node) node.destroy();
        else if (!backing.taken) {
          backing.taken = true;
          open().destroy();
        }
      },
    },
    // No read ahead of the web reader: nothing is opened before the first read.
    { highWaterMark: 0 },
  );
  backings.set(stream, backing);
  return stream;
}

/** Feeds `controller` from `node`'s `data` events, one chunk per pull. */
function listen(node: Readable, controller: ReadableStreamDefaultController<Uint8Array>): Readable {
  let settled = false;
  const settle = (error?: unknown) => {
    if (settled) return;
    settled = true;
    try {
      if (error === undefined) controller.close();
      else controller.error(error);
    } catch {} // cancelled already
  };
  node.on('data', (chunk: Uint8Array) => {
    if (settled) return;
    try {
      controller.enqueue(chunk);
    } catch {
      settled = true; // cancelled already
      return;
    }
    if ((controller.desiredSize ?? 0) <= 0) node.pause();
  });
  node.once('end', () => settle());
  node.once('error', (error) => settle(error));
  node.once('close', () => settle(new Error('the stream was closed before its end')));
  node.pause();
  return node;
}

/**
 * The Node stream under a {@link nodeBackedStream}, for a consumer that speaks Node streams, when the
 * web stream has not been read (nor cancelled, nor taken) yet: from then on the web stream must not be
 * read. Undefined for any other stream, which the caller reads as a web stream.
 *
 * @example
 * const source = takeNodeStream(body) ?? Readable.fromWeb(body);
 */
export function takeNodeStream(stream: ReadableStream<Uint8Array>): Readable | undefined {
  const backing = backings.get(stream);
  if (!backing || backing.taken || stream.locked) return undefined;
  backing.taken = true;
  return backing.open();
}

/**
 * Whether {@link takeNodeStream} would give `stream`'s Node stream (without taking it).
 *
 * @example
 * if (hasNodeStream(body)) return nodeBackedStream(() => counted(takeNodeStream(body)));
 */
export function hasNodeStream(stream: ReadableStream<Uint8Array>): boolean {
  const backing = backings.get(stream);
  return backing !== undefined && !backing.taken && !stream.locked;
}
