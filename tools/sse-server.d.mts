import type { IncomingHttpHeaders } from 'node:http';

/** One request the server received (body parsed as JSON). */
export interface SseSeen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** What one connection to a stream does, decided when it opens. */
export interface SsePlan {
  /** Cut the connection (no final chunk) after sending this many events. */
  dropAfter?: number;
  /** Send `stream.ended` with this data: at once, or after `endAfter` events. */
  end?: { reason: string; reconnect: boolean; message: string };
  endAfter?: number;
  /** The `retry:` field sent with `stream.ended`, in ms. */
  retry?: number;
}

export interface SseServerOptions {
  /** Whether a Bearer token is accepted; refused: `401 unauthenticated` with `WWW-Authenticate`. Default: any. */
  accept?: (token: string | undefined, seen: SseSeen) => boolean;
  /** Per connection to a stream (`connection`: how many came before it on that path). */
  plan?: (seen: SseSeen & { index: number; connection: number }) => SsePlan | undefined;
  /** Interval of the `: keepalive` comment lines. Default 15 000 ms, as the spec says. */
  keepAliveMs?: number;
  /** JSON routes, `'POST /v1/…'` → the answer. */
  routes?: Record<
    string,
    (
      seen: SseSeen,
    ) =>
      | { status: number; body?: unknown; headers?: Record<string, string> }
      | Promise<{ status: number; body?: unknown; headers?: Record<string, string> }>
  >;
}

export interface SseEntry {
  id: string;
  event: string;
  data: unknown;
}

export interface SseServer {
  url: string;
  /** `url` + `/v1`. */
  baseUrl: string;
  requests: SseSeen[];
  stream(
    path: string,
    entries?: { event: string; data: unknown }[],
    options?: { live?: boolean },
  ): SseEntry[];
  push(path: string, event: string, data: unknown): SseEntry;
  finish(path: string): void;
  openCount(path: string): number;
  close(): Promise<void>;
}

/** A Server-Sent Events server written from the stream spec, on 127.0.0.1 and a free port. */
export declare function startSseServer(options?: SseServerOptions): Promise<SseServer>;
