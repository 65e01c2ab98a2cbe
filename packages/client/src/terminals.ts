// Terminals entry (`@svc/client/terminals`): interactive programs on a computer's PTY. Output is the
// spec's event stream, read by the streams' reconnecting reader (resumed with `Last-Event-ID`), and
// handed over as bytes, exactly as the program wrote them; input is bytes in, as the files' uploads.
// Browser-safe.
import type { SvcClient } from './client.js';
import type { ApiPaths, CreateTerminalRequest, Terminal, TerminalExit, TerminalScreen } from './contract.js';
import { StreamEndedError } from './errors.js';
import { type StreamOptions, stream } from './streams.js';
import { errorFromResponse, unwrap } from './unwrap.js';

export type { CreateTerminalRequest, Terminal, TerminalExit, TerminalScreen } from './contract.js';

/** Where a terminal is: its workspace, computer and id. */
export interface TerminalRef {
  workspace: string;
  computer: string;
  terminal: string;
}

/**
 * One event of a terminal's output as {@link readTerminal} yields it: bytes the program wrote (`offset`
 * where they start in everything it wrote), or its end, last, with the exit code. `id` is what
 * `lastEventId` takes to resume after it. An output's `skipped`, when there, counts the bytes lost right
 * before it: the reader fell further behind than the service keeps (1 MiB), and read on after them.
 *
 * @example
 * import type { TerminalEvent } from '@svc/client/terminals';
 * const show = (e: TerminalEvent) => (e.event === 'output' ? e.bytes.byteLength : e.exit.exit_code);
 */
export type TerminalEvent =
  | { event: 'output'; id: string; offset: number; bytes: Uint8Array; skipped?: number }
  | { event: 'exit'; id: string; exit: TerminalExit };

const COLLECTION = '/workspaces/{workspace}/computers/{computer}/terminals';
const ONE = `${COLLECTION}/{terminal}`;

type Loose = (
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
const call = (client: SvcClient<ApiPaths>, method: 'POST' | 'PATCH' | 'DELETE' | 'GET') =>
  (client as unknown as Record<string, Loose>)[method] as Loose;

const encoder = new TextEncoder();

/** The bytes of a chunk's `data` as its `encoding` says (`utf-8` text, or `base64`). */
export function chunkBytes(chunk: { encoding: string; data: string }): Uint8Array {
  if (chunk.encoding === 'base64') return Uint8Array.from(atob(chunk.data), (c) => c.charCodeAt(0));
  return encoder.encode(chunk.data);
}

/**
 * Opens a terminal on a running computer (`createComputerTerminal`): `cols` × `rows` cells, the
 * image's login shell unless `command` says otherwise. Answers the terminal, `open`. A refusal
 * (`409 invalid_state`, `403 quota_exceeded`, …) throws `ApiError`.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { openTerminal } from '@svc/client/terminals';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const terminal = await openTerminal(client, 'dev', 'box', { cols: 80, rows: 24, command: ['python3'] });
 */
export async function openTerminal(
  client: SvcClient<ApiPaths>,
  workspace: string,
  computer: string,
  request: CreateTerminalRequest,
  options: { idempotencyKey?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<Terminal> {
  const header = options.idempotencyKey === undefined ? {} : { 'Idempotency-Key': options.idempotencyKey };
  const { terminal } = (await unwrap(
    call(client, 'POST')(COLLECTION, {
      params: { path: { workspace, computer }, header },
      body: request,
      signal: options.signal,
    }),
  )) as { terminal: Terminal };
  return terminal;
}

/**
 * A terminal's record (`getComputerTerminal`): size, state, and once closed its `exit_code`.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { getTerminal } from '@svc/client/terminals';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { state } = await getTerminal(client, { workspace: 'dev', computer: 'box', terminal: '01m6…' });
 */
export async function getTerminal(client: SvcClient<ApiPaths>, ref: TerminalRef): Promise<Terminal> {
  const { terminal } = (await unwrap(call(client, 'GET')(ONE, { params: { path: ref } }))) as {
    terminal: Terminal;
  };
  return terminal;
}

/**
 * Follows a terminal's output (`streamComputerTerminalOutput`) as an async iterator: `output` events
 * with the bytes exact (UTF-8 or not), then one `exit` with the exit code, after which it returns. A
 * dropped connection is resumed with `Last-Event-ID` (no gap, no repeat); pass `lastEventId` to take
 * up after an event read before (a reattach), or none to replay all the output the server keeps.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { readTerminal } from '@svc/client/terminals';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * for await (const e of readTerminal(client, { workspace: 'dev', computer: 'box', terminal: '01m6…' })) {
 *   if (e.event === 'output') terminal.write(e.bytes); // an xterm.js Terminal, say
 *   else console.log('exit code', e.exit.exit_code);
 * }
 */
export async function* readTerminal(
  client: SvcClient<ApiPaths>,
  ref: TerminalRef,
  options: StreamOptions = {},
): AsyncGenerator<TerminalEvent, void, undefined> {
  let from = options;
  /** Where the bytes read so far end, once something was read. */
  let end: number | undefined;
  for (let gaps = 0; ; gaps++) {
    try {
      for await (const e of stream(client, 'streamComputerTerminalOutput', { ...from, path: ref })) {
        if (e.event === 'output') {
          const bytes = chunkBytes(e.data);
          const skipped = end !== undefined && e.data.offset > end ? e.data.offset - end : 0;
          end = e.data.offset + bytes.byteLength;
          yield { event: 'output', id: e.id, offset: e.data.offset, bytes, ...(skipped ? { skipped } : {}) };
        } else if (e.event === 'exit') yield { event: 'exit', id: e.id, exit: e.data as TerminalExit };
      }
      return;
    } catch (error) {
      // Fell behind what the service keeps: read on from the oldest output kept, saying what was lost
      // (the next chunk's offset tells). A reader slower than the program for ever would loop: bounded.
      if (!(error instanceof StreamEndedError) || error.code !== 'cursor_expired' || gaps >= MAX_GAPS)
        throw error;
      const { lastEventId: _, ...rest } = from;
      from = rest;
    }
  }
}

/** How many times {@link readTerminal} reads on past output it fell too far behind to get, then throws. */
const MAX_GAPS = 100;

/**
 * Types into a terminal (`sendComputerTerminalInput`): bytes as they are, a string as UTF-8 (`'\r'` is
 * Enter, `'\x03'` Ctrl-C). At most 65,536 bytes a call. A closed terminal throws `ApiError`
 * `invalid_state`.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { writeTerminal } from '@svc/client/terminals';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * await writeTerminal(client, { workspace: 'dev', computer: 'box', terminal: '01m6…' }, 'echo hi\r');
 */
export async function writeTerminal(
  client: SvcClient<ApiPaths>,
  ref: TerminalRef,
  input: Uint8Array | string,
  options: { idempotencyKey?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<void> {
  const bytes = typeof input === 'string' ? encoder.encode(input) : input;
  const header: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
  if (options.idempotencyKey !== undefined) header['Idempotency-Key'] = options.idempotencyKey;
  const { error, response } = await call(client, 'POST')(`${ONE}/input`, {
    params: { path: ref, header },
    body: bytes,
    // The bytes as they are: openapi-fetch would JSON-encode them otherwise.
    bodySerializer: (value: unknown) => value,
    signal: options.signal,
  });
  if (!response.ok) throw errorFromResponse(response, error);
}

/**
 * Resizes a terminal (`updateComputerTerminal`): its program gets `SIGWINCH`. Answers the terminal.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { resizeTerminal } from '@svc/client/terminals';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * await resizeTerminal(client, { workspace: 'dev', computer: 'box', terminal: '01m6…' }, { cols: 160, rows: 48 });
 */
export async function resizeTerminal(
  client: SvcClient<ApiPaths>,
  ref: TerminalRef,
  size: { cols: number; rows: number },
): Promise<Terminal> {
  const { terminal } = (await unwrap(
    call(client, 'PATCH')(ONE, { params: { path: ref }, body: { cols: size.cols, rows: size.rows } }),
  )) as { terminal: Terminal };
  return terminal;
}

/**
 * What a terminal shows now (`getComputerTerminalScreen`), rendered by a terminal emulator: the visible
 * rows as text and the cursor.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { readTerminalScreen } from '@svc/client/terminals';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { lines, cursor } = await readTerminalScreen(client, { workspace: 'dev', computer: 'box', terminal: '01m6…' });
 */
export async function readTerminalScreen(
  client: SvcClient<ApiPaths>,
  ref: TerminalRef,
): Promise<TerminalScreen> {
  const { screen } = (await unwrap(call(client, 'GET')(`${ONE}/screen`, { params: { path: ref } }))) as {
    screen: TerminalScreen;
  };
  return screen;
}

/**
 * Closes a terminal (`deleteComputerTerminal`): its program gets `SIGHUP`; its output ends with an
 * `exit` event (`reason: closed`). Closing a closed terminal is no error.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { closeTerminal } from '@svc/client/terminals';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * await closeTerminal(client, { workspace: 'dev', computer: 'box', terminal: '01m6…' });
 */
export async function closeTerminal(client: SvcClient<ApiPaths>, ref: TerminalRef): Promise<void> {
  const { error, response } = await call(client, 'DELETE')(ONE, { params: { path: ref } });
  if (!response.ok) throw errorFromResponse(response, error);
}
