// `useTerminal`: a terminal of a computer, for a terminal emulator component (xterm.js) to bind to.
// The API's terminals through `@svc/client/terminals`: output bytes to `onData` listeners, `write` for
// input, `resize`, and the state and exit code as React state. Browser-safe.
import type { SvcClient } from '@svc/client';
import {
  type CreateTerminalRequest,
  closeTerminal,
  getTerminal,
  openTerminal,
  readTerminal,
  resizeTerminal,
  type Terminal,
  writeTerminal,
} from '@svc/client/terminals';
import { useCallback, useEffect, useRef, useState } from 'react';

/** Where a {@link useTerminal} is in its life. */
export type TerminalStatus = 'idle' | 'opening' | 'open' | 'closed' | 'error';

/**
 * Options of {@link useTerminal}.
 *
 * @example
 * import type { UseTerminalOptions } from '@svc/react';
 * declare const client: import('@svc/client').SvcClient;
 * const options: UseTerminalOptions = { client, workspace: 'dev', computer: 'box', open: { cols: 80, rows: 24 } };
 */
export interface UseTerminalOptions {
  client: SvcClient;
  workspace: string;
  computer: string;
  /** Attach to this terminal (its id) instead of opening one: its kept output is replayed first. */
  terminal?: string | undefined;
  /** What to open: `cols`, `rows`, `command`, `cwd`, `env`. Default 80×24, the login shell. */
  open?: CreateTerminalRequest | undefined;
  /** `false`: open nothing yet. Default `true`. */
  enabled?: boolean | undefined;
}

/**
 * What {@link useTerminal} gives a component: the terminal's state, and the calls an emulator binds to.
 *
 * @example
 * import type { TerminalSession } from '@svc/react';
 * const label = (t: TerminalSession) => (t.status === 'closed' ? `exit ${t.exitCode}` : t.status);
 */
export interface TerminalSession {
  status: TerminalStatus;
  /** The terminal's record once opened (its `id` is what `terminal` takes to attach again). */
  terminal: Terminal | undefined;
  /** Its program's exit code, once `closed` (undefined when unknown). */
  exitCode: number | undefined;
  /** Why the status is `error` (an `ApiError`, a `NetworkError`…). */
  error: unknown;
  /**
   * Bytes of output this page never got: it fell further behind than the service keeps (1 MiB), and
   * reading went on after them. 0 in the usual case; show it, or redraw, when it grows.
   */
  skippedBytes: number;
  /** Types into the terminal: a string (as UTF-8, what xterm.js's `onData` gives) or bytes. In order. */
  write(data: string | Uint8Array): void;
  /** Resizes the terminal (what xterm.js's `onResize` gives); the program gets SIGWINCH. */
  resize(cols: number, rows: number): void;
  /**
   * Calls `listener` with each chunk of output bytes, in order (xterm.js's `term.write` takes them as
   * they are). Output that came before the first listener is handed to it first. Answers a function that
   * stops it.
   */
  onData(listener: (bytes: Uint8Array) => void): () => void;
  /** Closes the terminal (its program gets SIGHUP). Unmounting does not: a terminal outlives its page. */
  close(): Promise<void>;
}

/**
 * Opens a terminal on a computer (or attaches to one) and follows its output while the component is
 * mounted: bind an emulator to `onData`, `write` and `resize`. The open carries one `Idempotency-Key`
 * per component, so React's second run of an effect (Strict Mode) gets the same terminal back, not a
 * second one. Unmounting stops reading; the terminal goes on until `close()` or its program exits.
 *
 * @example
 * import { useTerminal } from '@svc/react';
 * import { Terminal as Xterm } from '@xterm/xterm';
 * import { useEffect, useRef } from 'react';
 * declare const client: import('@svc/client').SvcClient;
 * function Shell() {
 *   const element = useRef<HTMLDivElement>(null);
 *   const session = useTerminal({ client, workspace: 'dev', computer: 'box', open: { cols: 80, rows: 24 } });
 *   useEffect(() => {
 *     const xterm = new Xterm({ cols: 80, rows: 24 });
 *     xterm.open(element.current!);
 *     const input = xterm.onData((data) => session.write(data));
 *     const stop = session.onData((bytes) => xterm.write(bytes));
 *     return () => { stop(); input.dispose(); xterm.dispose(); };
 *   }, [session.onData, session.write]);
 *   return <div ref={element} />;
 * }
 */
export function useTerminal(options: UseTerminalOptions): TerminalSession {
  const { client, workspace, computer, terminal: attach, enabled = true } = options;
  const [status, setStatus] = useState<TerminalStatus>('idle');
  const [terminal, setTerminal] = useState<Terminal | undefined>();
  const [exitCode, setExitCode] = useState<number | undefined>();
  const [error, setError] = useState<unknown>();
  const [skippedBytes, setSkippedBytes] = useState(0);
  const listeners = useRef(new Set<(bytes: Uint8Array) => void>());
  const backlog = useRef<Uint8Array[]>([]);
  const ref = useRef<{ workspace: string; computer: string; terminal: string } | undefined>(undefined);
  const sending = useRef<Promise<void>>(Promise.resolve());
  const key = useRef<string>(globalThis.crypto.randomUUID());
  const openRequest = useRef(options.open);
  openRequest.current = options.open;

  useEffect(() => {
    if (!enabled) return;
    const stop = new AbortController();
    const { signal } = stop;
    const emit = (bytes: Uint8Array) => {
      if (listeners.current.size === 0) backlog.current.push(bytes);
      for (const listener of listeners.current) listener(bytes);
    };
    // Another terminal (or the same again): nothing of the last one's carries over, and nothing is
    // typed into it meanwhile.
    ref.current = undefined;
    backlog.current = [];
    setTerminal(undefined);
    setExitCode(undefined);
    setError(undefined);
    setSkippedBytes(0);
    (async () => {
      setStatus('opening');
      const opened =
        attach === undefined
          ? await openTerminal(client, workspace, computer, openRequest.current ?? { cols: 80, rows: 24 }, {
              idempotencyKey: key.current,
              signal,
            })
          : await getTerminal(client, { workspace, computer, terminal: attach });
      if (signal.aborted) return;
      ref.current = { workspace, computer, terminal: opened.id };
      setTerminal(opened);
      setStatus(opened.state === 'open' ? 'open' : 'closed');
      for await (const e of readTerminal(client, ref.current, { signal })) {
        if (e.event === 'output') {
          const { skipped } = e;
          if (skipped) setSkippedBytes((before) => before + skipped);
          emit(e.bytes);
        } else {
          setExitCode(e.exit.exit_code);
          setStatus('closed');
        }
      }
    })().catch((cause: unknown) => {
      if (signal.aborted) return;
      setError(cause);
      setStatus('error');
    });
    return () => stop.abort();
  }, [client, workspace, computer, attach, enabled]);

  const write = useCallback(
    (data: string | Uint8Array) => {
      const where = ref.current;
      if (!where) return;
      sending.current = sending.current
        .then(() => writeTerminal(client, where, data))
        .catch((cause: unknown) => setError(cause));
    },
    [client],
  );
  const resize = useCallback(
    (cols: number, rows: number) => {
      const where = ref.current;
      if (where) resizeTerminal(client, where, { cols, rows }).catch((cause: unknown) => setError(cause));
    },
    [client],
  );
  const onData = useCallback((listener: (bytes: Uint8Array) => void) => {
    for (const bytes of backlog.current.splice(0)) listener(bytes);
    listeners.current.add(listener);
    return () => {
      listeners.current.delete(listener);
    };
  }, []);
  const close = useCallback(async () => {
    if (ref.current) await closeTerminal(client, ref.current);
  }, [client]);

  return { status, terminal, exitCode, error, skippedBytes, write, resize, onData, close };
}
