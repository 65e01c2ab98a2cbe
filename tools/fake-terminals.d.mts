import type { IncomingHttpHeaders } from 'node:http';

/** One request the fake received, its body as bytes. */
export interface FakeTerminalsSeen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface FakeTerminalsOptions {
  /** The simulated shell's prompt. Default `'$ '`. */
  prompt?: string;
  /**
   * Per connection to a terminal's output (`connection`: how many came before it): cut it after
   * `dropAfter` events; or after `expireAfter` events drop the next event from the log (and all before
   * it) and end the stream with `stream.ended` `cursor_expired`, as for a reader fallen too far behind.
   */
  plan?: (seen: {
    terminal: string;
    connection: number;
  }) => { dropAfter?: number; expireAfter?: number } | undefined;
  /** Called with the bytes of each accepted input request. */
  onInput?: (terminal: string, bytes: Uint8Array) => void;
}

/** A terminal's record as the fake answers it (the spec's `Terminal`). */
export interface FakeTerminal {
  id: string;
  workspace_id: string;
  computer_id: string;
  state: 'open' | 'closed';
  cols: number;
  rows: number;
  command: string[];
  exit_code?: number;
  end_reason?: string;
}

export interface FakeTerminals {
  url: string;
  /** `url` + `/v1`. */
  baseUrl: string;
  requests: FakeTerminalsSeen[];
  /** A terminal's record now. */
  terminal(id: string): FakeTerminal | undefined;
  /** The ids of every terminal opened, oldest first. */
  ids(): string[];
  /** Makes the terminal's program write these bytes (any bytes, UTF-8 or not). */
  emit(id: string, bytes: Uint8Array): void;
  /** Ends the terminal as its program would. */
  end(id: string, exitCode: number | undefined, reason?: string): void;
  close(): Promise<void>;
}

/** A fake of the terminal endpoints with a simulated line discipline, on 127.0.0.1 and a free port. */
export declare function startFakeTerminals(options?: FakeTerminalsOptions): Promise<FakeTerminals>;
