// A client that breaks off: one HTTP/1.1 request over a raw socket to 127.0.0.1, cut at a chosen point
// of the request or of the response, in one of the ways a flaky network or a hostile client cuts.
import { connect, type Socket } from 'node:net';
import { seededRandom } from '../support/random.js';

/** How a request is broken off. */
export const CUT_KINDS = [
  // the headers only, then the connection dropped (no body byte)
  'after-headers',
  // part of the body, then dropped
  'mid-body',
  // a Content-Length longer than what is sent, then a half-close (FIN): the server reads an early end
  'short-length',
  // a chunked body cut inside a chunk
  'chunked-cut',
  // the whole request, then dropped before or while the answer comes
  'after-body',
  // the whole request, the answer's first bytes read, then dropped mid-answer
  'mid-response',
  // the whole request, then never read: the server's writes back up until the client drops
  'stalled-reader',
  // part of the body, then the start of a second request on the same connection, then dropped
  'pipelined',
] as const;
export type CutKind = (typeof CUT_KINDS)[number];

/** How the connection is dropped. */
export const DROPS = ['reset', 'fin', 'destroy'] as const;
export type Drop = (typeof DROPS)[number];

/** One request to cut. */
export interface CutRequest {
  method: string;
  /** The path and query, from `/v1`. */
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** One cut: where, how, and when. */
export interface Cut {
  kind: CutKind;
  drop: Drop;
  /** Of the body, how many bytes are sent before the cut (kinds that cut the body). */
  at: number;
  /** How long after the last byte sent the connection is dropped. */
  delayMs: number;
}

/** What the client saw before it cut: the status line of an answer, when one came. */
export interface CutOutcome {
  status: number | undefined;
}

/** The longest a cut may take, whatever the server does: the socket is destroyed then. */
const CUT_BOUND_MS = 5_000;

function head(request: CutRequest, framing: 'length' | 'chunked', declared: number): string {
  const lines = [`${request.method} ${request.path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
  if (framing === 'chunked') lines.push('Transfer-Encoding: chunked');
  else if (declared > 0 || request.method !== 'GET') lines.push(`Content-Length: ${declared}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function drop(socket: Socket, how: Drop): void {
  if (how === 'reset') socket.resetAndDestroy();
  else if (how === 'fin') socket.end();
  else socket.destroy();
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends `request` to `port` and breaks it off as `cut` says; resolves once the socket is closed (at
 * most {@link CUT_BOUND_MS}). Never rejects: every socket error is the point of the exercise.
 *
 * @example
 * await cutRequest(port, { method: 'PUT', path, headers, body }, { kind: 'mid-body', drop: 'reset', at: 100, delayMs: 5 });
 */
export async function cutRequest(port: number, request: CutRequest, cut: Cut): Promise<CutOutcome> {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  let firstData: (() => void) | undefined;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    if (answer.length < 64) answer += chunk.toString('latin1');
    firstData?.();
  });
  const bound = setTimeout(() => socket.destroy(), CUT_BOUND_MS);
  try {
    await new Promise<void>((resolve) => {
      socket.once('connect', resolve);
      socket.once('close', resolve);
    });
    if (socket.destroyed) return { status: undefined };
    const body = request.body;
    const at = Math.min(cut.at, body.length);
    switch (cut.kind) {
      case 'after-headers':
        socket.write(head(request, 'length', Math.max(body.length, 1)));
        break;
      case 'mid-body':
        socket.write(head(request, 'length', body.length));
        socket.write(body.subarray(0, at));
        break;
      case 'short-length':
        socket.write(head(request, 'length', body.length + 1 + cut.at));
        socket.write(body);
        break;
      case 'chunked-cut': {
        socket.write(head(request, 'chunked', 0));
        socket.write(`${body.length.toString(16)}\r\n`);
        socket.write(body.subarray(0, at));
        break;
      }
      case 'pipelined':
        socket.write(head(request, 'length', body.length));
        socket.write(body.subarray(0, at));
        socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        break;
      case 'stalled-reader':
        socket.pause();
        socket.write(head(request, 'length', body.length));
        socket.write(body);
        break;
      case 'after-body':
      case 'mid-response':
        socket.write(head(request, 'length', body.length));
        socket.write(body);
        if (cut.kind === 'mid-response')
          await Promise.race([new Promise<void>((resolve) => (firstData = resolve)), closed, wait(1_000)]);
        break;
    }
    await wait(cut.delayMs);
    drop(socket, cut.kind === 'stalled-reader' ? 'destroy' : cut.drop);
    await closed;
  } finally {
    clearTimeout(bound);
    socket.destroy();
  }
  const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
  return { status: status === undefined ? undefined : Number(status) };
}

/**
 * Seeded choices (see `seededRandom`): the same seed gives the same cuts, so a failing run is
 * reproduced with `FAULT_SEED=<seed>`.
 *
 * @example
 * const random = seeded(42); random.int(10); // 0..9
 */
export function seeded(seed: number): {
  next(): number;
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
} {
  const next = seededRandom(seed);
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: (items) => items[int(items.length)] as (typeof items)[number] };
}
