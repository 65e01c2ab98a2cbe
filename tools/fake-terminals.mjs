// A fake of the terminal endpoints for the faces' tests (client, CLI, MCP), written from the spec
// (spec/paths/computers/…_terminals*.yaml) until and beside the real server: open, list, get, resize,
// close, the output event stream (resumable with `Last-Event-ID` or `after`, bytes that are not UTF-8
// sent as base64), input bytes, and the screen. Its program is a simulated line discipline over a tiny
// shell, as the simulated driver's: input echoed, CR → CRLF, `echo …`, `exit N`, Ctrl-C, Ctrl-D,
// backspace. The screen is a naive renderer (CR, LF, BS and printable characters; escape sequences
// skipped), enough for what these tests print. Binds 127.0.0.1 port 0.
import { createServer } from 'node:http';

const PREFIX =
  /^\/v1\/workspaces\/([^/]+)\/computers\/([^/]+)\/terminals(?:\/([^/]+))?(?:\/(output|input|screen))?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });
// An escape sequence (CSI), skipped by the naive screen.
const CSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[ -/]*[@-~]`, 'g');

const envelope = (code, message, details = {}) => ({
  error: { code, message, details, request_id: `req-${code}` },
});

/** `{encoding, data}` of a chunk: UTF-8 text when it is valid UTF-8 without NUL, else base64. */
function encode(bytes) {
  if (!bytes.includes(0)) {
    try {
      return { encoding: 'utf-8', data: utf8.decode(bytes) };
    } catch {}
  }
  return { encoding: 'base64', data: Buffer.from(bytes).toString('base64') };
}

/** @param {import('./fake-terminals.d.mts').FakeTerminalsOptions} [options] */
export async function startFakeTerminals(options = {}) {
  const terminals = new Map(); // id → state
  const requests = [];
  let next = 0;
  const prompt = options.prompt ?? '$ ';

  const json = (res, status, body, headers = {}) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': 'req-fake', ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const record = (t) => {
    const { log, line, streams, connections, sequence, dropNext, ...rest } = t;
    return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  };

  const push = (t, event, data) => {
    t.sequence += 1;
    const entry = { id: String(t.sequence), event, data };
    if (t.dropNext && event === 'output') {
      // Dropped as a log that keeps too little drops it: its id and its bytes are never seen.
      t.dropNext = false;
      return;
    }
    t.log.push(entry);
    for (const stream of [...t.streams]) stream.send(entry);
  };
  const write = (t, bytes) => {
    if (t.state !== 'open' || bytes.byteLength === 0) return;
    push(t, 'output', { offset: t.offset, ...encode(bytes) });
    t.offset += bytes.byteLength;
    t.screenBytes.push(...bytes);
  };
  const end = (t, exitCode, reason) => {
    if (t.state !== 'open') return;
    const closed_at = new Date().toISOString();
    Object.assign(t, {
      state: 'closed',
      closed_at,
      updated_at: closed_at,
      exit_code: exitCode,
      end_reason: reason,
    });
    push(t, 'exit', { exit_code: exitCode, reason, closed_at });
  };
  const text = (t, s) => write(t, Buffer.from(s));

  // The simulated line discipline: canonical mode with echo, then the tiny shell on each line.
  const type = (t, bytes) => {
    for (const byte of bytes) {
      if (t.state !== 'open') return;
      if (byte === 0x0d || byte === 0x0a) {
        text(t, '\r\n');
        const line = Buffer.from(t.line).toString();
        t.line = [];
        const exit = /^\s*exit(?:\s+(\d+))?\s*$/.exec(line);
        if (exit) return end(t, Number(exit[1] ?? 0) & 255, 'exited');
        const echo = /^\s*echo(?:\s(.*))?$/.exec(line);
        if (echo) text(t, `${echo[1] ?? ''}\r\n`);
        else if (line.trim() !== '') text(t, `sh: ${line.trim().split(/\s+/)[0]}: not found\r\n`);
        text(t, prompt);
      } else if (byte === 0x03) {
        t.line = [];
        text(t, `^C\r\n${prompt}`);
      } else if (byte === 0x04) {
        if (t.line.length === 0) return end(t, 0, 'exited');
      } else if (byte === 0x7f || byte === 0x08) {
        if (t.line.length > 0) {
          t.line.pop();
          text(t, '\b \b');
        }
      } else {
        t.line.push(byte);
        write(t, Uint8Array.of(byte));
      }
    }
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const seen = { method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body };
    requests.push(seen);
    const match = PREFIX.exec(url.pathname);
    if (!match) return json(res, 404, envelope('not_found', `nothing at ${url.pathname}`));
    const [, workspace, computer, id, sub] = match;
    const method = seen.method;

    if (id === undefined) {
      if (method === 'GET')
        return json(res, 200, {
          terminals: [...terminals.values()]
            .filter((t) => t.computer_id === computer)
            .reverse()
            .map(record),
          next_cursor: null,
          has_more: false,
        });
      if (method !== 'POST') return json(res, 405, envelope('method_not_allowed', method));
      const asked = JSON.parse(body.toString() || '{}');
      const now = new Date().toISOString();
      const t = {
        id: `01fake${String(++next).padStart(21, '0')}`,
        workspace_id: workspace,
        computer_id: computer,
        state: 'open',
        cols: asked.cols,
        rows: asked.rows,
        command: asked.command ?? ['/bin/sh', '-l'],
        cwd: asked.cwd,
        created_by: 'fake',
        created_at: now,
        updated_at: now,
        log: [],
        line: [],
        offset: 0,
        screenBytes: [],
        streams: new Set(),
        connections: 0,
        sequence: 0,
        dropNext: false,
      };
      terminals.set(t.id, t);
      text(t, prompt);
      return json(res, 201, { terminal: record(t) });
    }

    const t = terminals.get(id);
    if (!t || t.computer_id !== computer) return json(res, 404, envelope('not_found', `no terminal ${id}`));

    if (sub === undefined) {
      if (method === 'GET') return json(res, 200, { terminal: record(t) });
      if (method === 'DELETE') {
        end(t, 129, 'closed');
        return json(res, 204);
      }
      if (method === 'PATCH') {
        if (t.state !== 'open') return json(res, 409, envelope('invalid_state', 'closed'));
        const { cols, rows } = JSON.parse(body.toString());
        Object.assign(t, { cols, rows, updated_at: new Date().toISOString() });
        return json(res, 200, { terminal: record(t) });
      }
    }
    if (sub === 'input' && method === 'POST') {
      if (t.state !== 'open')
        return json(
          res,
          409,
          envelope('invalid_state', 'the terminal is closed', { current_state: 'closed' }),
        );
      options.onInput?.(t.id, new Uint8Array(body));
      type(t, body);
      return json(res, 204);
    }
    if (sub === 'screen' && method === 'GET') return json(res, 200, { screen: render(t) });
    if (sub === 'output' && method === 'GET') {
      const cursor = req.headers['last-event-id'] ?? url.searchParams.get('after') ?? undefined;
      const nth = t.connections++;
      const plan = options.plan?.({ terminal: t.id, connection: nth }) ?? {};
      res.writeHead(200, {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-store',
        'Request-Id': 'req-stream',
      });
      res.flushHeaders();
      let sent = 0;
      let cut = false;
      const stream = {
        send(entry) {
          if (cut || res.writableEnded || res.destroyed) return;
          res.write(`id: ${entry.id}\nevent: ${entry.event}\ndata: ${JSON.stringify(entry.data)}\n\n`);
          sent += 1;
          if (entry.event === 'exit') return stream.close();
          if (plan.expireAfter !== undefined && sent >= plan.expireAfter) {
            // The reader fell behind what is kept: the next event is dropped from the log, the stream
            // ends as the service ends it then (cursor_expired, the id of the last event sent).
            cut = true;
            t.streams.delete(stream);
            const next = t.log.findIndex((e) => BigInt(e.id) > BigInt(entry.id));
            if (next >= 0) t.log.splice(0, next + 1);
            else {
              t.log.splice(0, t.log.length);
              t.dropNext = true;
            }
            const ended = {
              reason: 'cursor_expired',
              reconnect: false,
              message: 'The log no longer keeps the events after the last event sent.',
            };
            res.end(`id: ${entry.id}\nevent: stream.ended\ndata: ${JSON.stringify(ended)}\nretry: 1000\n\n`);
            return;
          }
          if (plan.dropAfter !== undefined && sent >= plan.dropAfter) {
            cut = true;
            t.streams.delete(stream);
            // No final chunk: the reader sees the connection cut mid-stream.
            setTimeout(() => res.destroy(), 20);
          }
        },
        close() {
          t.streams.delete(stream);
          res.end();
        },
      };
      res.on('close', () => t.streams.delete(stream));
      t.streams.add(stream);
      for (const entry of t.log.filter((e) => cursor === undefined || BigInt(e.id) > BigInt(cursor)))
        stream.send(entry);
      if (t.state !== 'open' && !cut && !res.writableEnded) stream.close();
      return;
    }
    return json(res, 405, envelope('method_not_allowed', `${method} ${url.pathname}`));
  });

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    terminal: (id) => {
      const t = terminals.get(id);
      return t && record(t);
    },
    ids: () => [...terminals.keys()],
    emit: (id, bytes) => write(terminals.get(id), bytes),
    end: (id, exitCode, reason = 'exited') => end(terminals.get(id), exitCode, reason),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/** Renders the bytes a terminal wrote into `rows` lines of `cols` cells: CR, LF, BS, printable text. */
function render(t) {
  const { cols, rows } = t;
  const lines = [[]];
  let x = 0;
  const chars = Buffer.from(t.screenBytes).toString('utf8').replace(CSI, '');
  for (const ch of chars) {
    if (ch === '\r') x = 0;
    else if (ch === '\n') lines.push([]);
    else if (ch === '\b') x = Math.max(0, x - 1);
    else if (ch >= ' ') {
      if (x >= cols) {
        lines.push([]);
        x = 0;
      }
      const line = lines[lines.length - 1];
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
