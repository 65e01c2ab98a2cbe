/**
 * The local terminal, when stdin and stdout are one (`svc computers shell` puts it in raw mode and
 * follows its size). `main.ts` passes the process's; tests pass none, or their own.
 */
export interface TerminalIo {
  /** Whether stdin and stdout are both a terminal. */
  isTTY: boolean;
  /** Raw mode on or off (every key as typed, no echo, no signals from Ctrl-C). */
  setRawMode(raw: boolean): void;
  /** Its size now, when known. */
  size(): { cols: number; rows: number } | undefined;
  /** Calls `listener` on each resize (SIGWINCH); answers a function that stops it. */
  onResize(listener: () => void): () => void;
}

/** Where a run of `svc` reads and writes; `main.ts` passes the process's, tests pass their own. */
export interface CliIo {
  /** Text, or bytes where a command's output is not text (`svc computers exec`). */
  stdout: { write(text: string | Uint8Array): unknown };
  stderr: { write(text: string | Uint8Array): unknown };
  /** What `--stdin` sends (`svc computers exec … --stdin`). Default: nothing to read. */
  stdin?: AsyncIterable<Uint8Array | string>;
  env: Record<string, string | undefined>;
  /** Whether stderr is a terminal: progress is redrawn in place there, printed line by line otherwise. */
  isTTY: boolean;
  /** The width tables fit: the terminal's columns when stdout is one. Default 80. */
  columns?: number | undefined;
  /** The fetch every API call goes through (tests pass a handler). Default `globalThis.fetch`. */
  fetch?: (request: Request) => Promise<Response>;
  /** Opens a URL in the user's browser. Default: {@link openBrowser}. */
  openBrowser?: (url: string) => Promise<void>;
  /** The home directory, for `~/.config/svc`. Default `os.homedir()`. */
  homedir?: string;
  now?: () => number;
  /** The local terminal for `svc computers shell`. Default: none (plain piping). */
  terminal?: TerminalIo | undefined;
  /** Aborting it stops following a stream as Ctrl-C does (tests; the process's SIGINT is always heard). */
  signal?: AbortSignal | undefined;
}
