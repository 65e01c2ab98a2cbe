// Simulated terminals for the mock: MSW handlers of the terminal operations that keep terminals in
// memory and run each as the server's simulated driver does, a line discipline over a tiny shell
// (input echoed, CR → CRLF, `echo …`, `exit N`, Ctrl-C, Ctrl-D, backspace). The output is a live event
// stream, resumable with `Last-Event-ID`. Paths come from the document; bodies follow the spec.
import type { OpenApiDocument } from '@svc/contract/browser';
import { type HttpHandler, HttpResponse, http } from 'msw';
import { BUNDLED_DOCUMENT } from './document.js';
import { operationById } from './examples.js';

/** Options of {@link terminalHandlers}. */
export interface TerminalMockOptions {
  /** Where the client sends requests: its `baseUrl`. */
  baseUrl: string;
  /** The document whose terminal paths to answer. Default: the bundled v1 document. */
  document?: OpenApiDocument;
  /** The simulated shell's prompt. Default `'$ '`. */
  prompt?: string;
}

interface Entry {
  id: number;
  event: 'output' | 'exit';
  data: unknown;
}

interface Simulated {
  record: Record<string, unknown> & { id: string; state: string; cols: number; rows: number };
  log: Entry[];
  line: number[];
  offset: number;
  listeners: Set<(entry: Entry) => void>;
}

const encoder = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true });

function chunkOf(bytes: Uint8Array, offset: number) {
  if (!bytes.includes(0)) {
    try {
      return { offset, encoding: 'utf-8', data: utf8.decode(bytes) };
    } catch {}
  }
  return { offset, encoding: 'base64', data: btoa(String.fromCharCode(...bytes)) };
}

const error = (status: number, code: string, message: string) =>
  HttpResponse.json({ error: { code, message, details: {}, request_id: 'req_simulated' } }, { status });

const frame = (entry: Entry) =>
  `id: ${entry.id}\nevent: ${entry.event}\ndata: ${JSON.stringify(entry.data)}\n\n`;

/**
 * MSW handlers that simulate the terminal operations (open, list, get, resize, close, output, input,
 * screen): a line discipline over a tiny shell, as the server's simulated driver, so a terminal page
 * runs without a server. Put them before the mock's handlers, which answer the same paths from examples.
 * The screen is a plain rendering (CR, LF, backspace, text), not an emulator's.
 *
 * @example
 * import { createMock, terminalHandlers } from '@svc/react/msw';
 * import { setupWorker } from 'msw/browser';
 * const baseUrl = 'http://api.test/v1';
 * const worker = setupWorker(...terminalHandlers({ baseUrl }), ...createMock({ baseUrl }).handlers);
 */
export function terminalHandlers(options: TerminalMockOptions): HttpHandler[] {
  const document = options.document ?? BUNDLED_DOCUMENT;
  const base = options.baseUrl.replace(/\/+$/, '');
  const prompt = options.prompt ?? '$ ';
  const route = (operationId: string) =>
    `${base}${operationById(document, operationId).path.replaceAll(/\{([^}]+)\}/g, ':$1')}`;
  const terminals = new Map<string, Simulated>();
  const byKey = new Map<string, string>();
  let next = 0;

  const push = (t: Simulated, event: Entry['event'], data: unknown) => {
    const entry = { id: t.log.length + 1, event, data };
    t.log.push(entry);
    for (const listener of t.listeners) listener(entry);
  };
  const write = (t: Simulated, text: string | Uint8Array) => {
    const bytes = typeof text === 'string' ? encoder.encode(text) : text;
    if (t.record.state !== 'open' || bytes.byteLength === 0) return;
    push(t, 'output', chunkOf(bytes, t.offset));
    t.offset += bytes.byteLength;
  };
  const end = (t: Simulated, exitCode: number, reason: string) => {
    if (t.record.state !== 'open') return;
    const now = new Date().toISOString();
    Object.assign(t.record, {
      state: 'closed',
      closed_at: now,
      updated_at: now,
      exit_code: exitCode,
      end_reason: reason,
    });
    push(t, 'exit', { exit_code: exitCode, reason, closed_at: now });
  };
  const type = (t: Simulated, bytes: Uint8Array) => {
    for (const byte of bytes) {
      if (t.record.state !== 'open') return;
      if (byte === 0x0d || byte === 0x0a) {
        write(t, '\r\n');
        const line = new TextDecoder().decode(Uint8Array.from(t.line));
        t.line = [];
        const exit = /^\s*exit(?:\s+(\d+))?\s*$/.exec(line);
        if (exit) return end(t, Number(exit[1] ?? 0) & 255, 'exited');
        const echo = /^\s*echo(?:\s(.*))?$/.exec(line);
        if (echo) write(t, `${echo[1] ?? ''}\r\n`);
        else if (line.trim() !== '') write(t, `sh: ${line.trim().split(/\s+/)[0]}: not found\r\n`);
        write(t, prompt);
      } else if (byte === 0x03) {
        t.line = [];
        write(t, `^C\r\n${prompt}`);
      } else if (byte === 0x04) {
        if (t.line.length === 0) return end(t, 0, 'exited');
      } else if (byte === 0x7f || byte === 0x08) {
        if (t.line.length > 0) {
          t.line.pop();
          write(t, '\b \b');
        }
      } else {
        t.line.push(byte);
        write(t, Uint8Array.of(byte));
      }
    }
  };
  const find = (params: Record<string, unknown>) => {
    const t = terminals.get(String(params.terminal));
    return t && t.record.computer_id === params.computer ? t : undefined;
  };
  const missing = () => error(404, 'not_found', 'No such terminal.');

  return [
    http.post(route('createComputerTerminal'), async ({ request, params }) => {
      const key = request.headers.get('Idempotency-Key');
      const replay = key ? terminals.get(byKey.get(key) ?? '') : undefined;
      if (replay)
        return HttpResponse.json(
          { terminal: replay.record },
          { status: 201, headers: { 'Idempotent-Replayed': 'true' } },
        );
      const asked = (await request.json()) as {
        cols: number;
        rows: number;
        command?: string[];
        cwd?: string;
      };
      const now = new Date().toISOString();
      const id = `01simulated${String(++next).padStart(16, '0')}`;
      const t: Simulated = {
        record: {
          id,
          workspace_id: String(params.workspace),
          computer_id: String(params.computer),
          state: 'open',
          cols: asked.cols,
          rows: asked.rows,
          command: asked.command ?? ['/bin/sh', '-l'],
          ...(asked.cwd ? { cwd: asked.cwd } : {}),
          created_by: 'simulated',
          created_at: now,
          updated_at: now,
        },
        log: [],
        line: [],
        offset: 0,
        listeners: new Set(),
      };
      terminals.set(id, t);
      if (key) byKey.set(key, id);
      write(t, prompt);
      return HttpResponse.json({ terminal: t.record }, { status: 201 });
    }),
    http.get(route('listComputerTerminals'), ({ params }) =>
      HttpResponse.json({
        terminals: [...terminals.values()]
          .filter((t) => t.record.computer_id === params.computer)
          .reverse()
          .map((t) => t.record),
        next_cursor: null,
        has_more: false,
      }),
    ),
    http.get(route('getComputerTerminal'), ({ params }) => {
      const t = find(params);
      return t ? HttpResponse.json({ terminal: t.record }) : missing();
    }),
    http.patch(route('updateComputerTerminal'), async ({ request, params }) => {
      const t = find(params);
      if (!t) return missing();
      if (t.record.state !== 'open') return error(409, 'invalid_state', 'The terminal is closed.');
      const { cols, rows } = (await request.json()) as { cols: number; rows: number };
      Object.assign(t.record, { cols, rows, updated_at: new Date().toISOString() });
      return HttpResponse.json({ terminal: t.record });
    }),
    http.delete(route('deleteComputerTerminal'), ({ params }) => {
      const t = find(params);
      if (!t) return missing();
      end(t, 129, 'closed');
      return new HttpResponse(null, { status: 204 });
    }),
    http.post(route('sendComputerTerminalInput'), async ({ request, params }) => {
      const t = find(params);
      if (!t) return missing();
      if (t.record.state !== 'open') return error(409, 'invalid_state', 'The terminal is closed.');
      type(t, new Uint8Array(await request.arrayBuffer()));
      return new HttpResponse(null, { status: 204 });
    }),
    http.get(route('getComputerTerminalScreen'), ({ params }) => {
      const t = find(params);
      return t ? HttpResponse.json({ screen: render(t) }) : missing();
    }),
    http.get(route('streamComputerTerminalOutput'), ({ request, params }) => {
      const t = find(params);
      if (!t) return missing();
      const url = new URL(request.url);
      const cursor = Number(request.headers.get('Last-Event-ID') ?? url.searchParams.get('after') ?? 0);
      let listener: ((entry: Entry) => void) | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          const send = (entry: Entry) => {
            controller.enqueue(encoder.encode(frame(entry)));
            if (entry.event === 'exit') {
              if (listener) t.listeners.delete(listener);
              controller.close();
            }
          };
          for (const entry of t.log) if (entry.id > cursor) send(entry);
          if (t.record.state !== 'open') {
            if (t.log.every((e) => e.id <= cursor)) controller.close();
            return;
          }
          listener = send;
          t.listeners.add(listener);
        },
        cancel() {
          if (listener) t.listeners.delete(listener);
        },
      });
      return new HttpResponse(body, {
        headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' },
      });
    }),
  ];
}

/** The output as plain text rows: CR, LF, backspace and printable characters; escape sequences skipped. */
function render(t: Simulated) {
  const { cols, rows } = t.record;
  const bytes: number[] = [];
  for (const entry of t.log) {
    if (entry.event !== 'output') continue;
    const chunk = entry.data as { encoding: string; data: string };
    if (chunk.encoding === 'base64') bytes.push(...Array.from(atob(chunk.data), (c) => c.charCodeAt(0)));
    else bytes.push(...encoder.encode(chunk.data));
  }
  const lines: string[][] = [[]];
  let x = 0;
  for (const ch of new TextDecoder().decode(Uint8Array.from(bytes))) {
    if (ch === '\r') x = 0;
    else if (ch === '\n') lines.push([]);
    else if (ch === '\b') x = Math.max(0, x - 1);
    else if (ch >= ' ') {
      if (x >= cols) {
        lines.push([]);
        x = 0;
      }
      const line = lines[lines.length - 1] as string[];
      while (line.length < x) line.push(' ');
      line[x] = ch;
      x += 1;
    }
  }
  const visible = lines.slice(-rows).map((l) => l.join('').trimEnd());
  const y = visible.length - 1;
  while (visible.length < rows) visible.push('');
  return { cols, rows, lines: visible, cursor: { x, y } };
}
