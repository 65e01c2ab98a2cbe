import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long, and how much, a connection closing under an unread request body goes on reading it. */
export interface LingerBounds {
  /** The longest wait for the client's next bytes. */
  idleMs: number;
  /** The longest the whole linger lasts. */
  totalMs: number;
  /** The most it reads and drops. */
  maxBytes: number;
}

/** nginx's `lingering_timeout` (5 s) and `lingering_time` (30 s), and the adapter's own drain (64 MiB). */
export const LINGER: LingerBounds = { idleMs: 5_000, totalMs: 30_000, maxBytes: 64 * 1024 * 1024 };

/**
 * Closes a connection without resetting a client that is still sending the request body its answer
 * did not read (an upload refused early: a missing directory, a declared size over the limit, a
 * quota).
 *
 * A socket closed while bytes it has not read wait in the kernel makes the kernel send a reset, and a
 * client that receives it may lose the answer it had not read yet: it sees ECONNRESET or EPIPE
 * instead of the 404 or 413 (fetch, under load). Both node:http (after an answer with
 * `Connection: close`) and the adapter (when it gives up draining an unread body, after half a
 * second or 64 MiB) close with `socket.destroySoon()`, which is exactly that. On a connection whose
 * last request body is unread, `destroySoon` here is a lingering close instead (as nginx and Apache
 * do): the write side ends (the client sees the end after the answer) and what the client still sends
 * is read and dropped until its body ends, it closes, or {@link LINGER}'s bounds pass; then the
 * socket is destroyed. Any other close is node's own.
 *
 * @example
 * const server = createAdaptorServer({ fetch });
 * lingerOnClose(server as Server);
 */
export function lingerOnClose(server: Server, bounds: LingerBounds = LINGER): void {
  const bodies = new WeakMap<Socket, IncomingMessage>();
  server.on('request', (request: IncomingMessage) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') bodies.set(request.socket, request);
  });
  server.on('connection', (socket: Socket) => {
    const destroySoon = socket.destroySoon;
    socket.destroySoon = function lingeringClose(this: Socket) {
      const request = bodies.get(this);
      if (request === undefined || request.complete || request.destroyed || this.destroyed)
        return destroySoon.call(this);
      linger(this, request, bounds, () => destroySoon.call(this));
    };
  });
}

function linger(socket: Socket, request: IncomingMessage, bounds: LingerBounds, close: () => void): void {
  // Counted on the socket: node's parser drops the bytes of a body nobody read without handing them on.
  const from = socket.bytesRead;
  const began = performance.now();
  let seen = from;
  let quietSince = began;
  const stop = () => {
    clearInterval(watch);
    request.off('end', stop);
    socket.off('close', stop);
    // node's own: destroyed once the answer's last bytes are written.
    if (!socket.destroyed) close();
  };
  const watch = setInterval(
    () => {
      const now = performance.now();
      const read = socket.bytesRead;
      if (read !== seen) {
        seen = read;
        quietSince = now;
      }
      if (read - from > bounds.maxBytes || now - quietSince >= bounds.idleMs || now - began >= bounds.totalMs)
        stop();
    },
    Math.min(100, bounds.idleMs),
  );
  watch.unref();
  socket.end();
  // The answer is out: a reader of the body has stopped; what is left is dropped (as node's _dump does).
  request.removeAllListeners('data');
  request.resume();
  request.once('end', stop);
  socket.once('close', stop);
}
