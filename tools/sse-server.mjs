// A small Server-Sent Events server for the faces' tests (client, CLI, MCP), written from the stream
// spec (spec/paths/operations/operations_operation_output.yaml, workspaces_workspace_events.yaml):
// `text/event-stream`, one event per log entry with its `id`, resumption with `Last-Event-ID` (it wins)
// or `after` giving exactly the entries after it, keep-alive comment lines, `stream.ended` with `retry`,
// and the published JSON error envelope before a stream starts (401 with `WWW-Authenticate`, 404).
// JSON routes answer the calls around a stream (`POST …/run`). Binds 127.0.0.1 port 0.
import { createServer } from 'node:http';

const envelope = (code, message) => ({
  error: { code, message, details: {}, request_id: `req-${code}` },
});

/** @param {import('./sse-server.d.mts').SseServerOptions} [options] */
export async function startSseServer(options = {}) {
  const logs = new Map(); // path → [{ id, event, data }]
  const finals = new Set(); // paths whose log is complete: the stream closes after its last entry
  const liveOnly = new Set(); // paths that start at the next event without a cursor (workspace events)
  const connections = new Map(); // path → connections made so far
  const open = new Map(); // path → Set of { send(entry), end() }
  const requests = [];
  const accepts = options.accept ?? (() => true);
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const routes = options.routes ?? {};

  const logOf = (path) => {
    if (!logs.has(path)) logs.set(path, []);
    return logs.get(path);
  };

  const json = (res, status, body, headers = {}) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': 'req-test', ...headers });
    res.end(JSON.stringify(body));
  };

  const frame = (entry) =>
    `${entry.retry === undefined ? '' : `retry: ${entry.retry}\n`}id: ${entry.id}\nevent: ${entry.event}\ndata: ${JSON.stringify(entry.data)}\n\n`;

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString();
    const seen = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
    };
    const index = requests.push(seen) - 1;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!accepts(token, seen))
      return json(res, 401, envelope('unauthenticated', 'The access token is missing or expired.'), {
        'WWW-Authenticate': 'Bearer',
      });
    const route = routes[`${seen.method} ${url.pathname}`];
    if (route) {
      const answer = await route(seen);
      return json(res, answer.status, answer.body, answer.headers);
    }
    if (seen.method !== 'GET' || !logs.has(url.pathname))
      return json(res, 404, envelope('not_found', `no stream at ${url.pathname}`));

    const path = url.pathname;
    const cursor = req.headers['last-event-id'] ?? url.searchParams.get('after') ?? undefined;
    const nth = connections.get(path) ?? 0;
    connections.set(path, nth + 1);
    const plan = options.plan?.({ ...seen, index, connection: nth }) ?? {};
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      'Request-Id': 'req-stream',
    });
    res.flushHeaders();
    let sent = 0;
    const connection = {
      closed: false,
      send(entry) {
        if (res.writableEnded || this.closed) return;
        res.write(frame(entry));
        sent += 1;
        if (plan.endAfter !== undefined && sent >= plan.endAfter && plan.end) {
          res.write(frame({ id: entry.id, event: 'stream.ended', data: plan.end, retry: plan.retry }));
          return this.end();
        }
        if (plan.dropAfter !== undefined && sent >= plan.dropAfter) return this.drop();
        if (finals.has(path) && entry === logOf(path).at(-1)) this.end();
      },
      end() {
        clearInterval(timer);
        open.get(path)?.delete(connection);
        res.end();
      },
      drop() {
        this.closed = true;
        clearInterval(timer);
        open.get(path)?.delete(connection);
        // No final chunk: the client sees the connection cut mid-stream, once what was written reached it.
        setTimeout(() => res.destroy(), 20);
      },
    };
    const timer = setInterval(() => res.write(': keepalive\n\n'), keepAliveMs);
    res.on('close', () => {
      clearInterval(timer);
      open.get(path)?.delete(connection);
    });
    if (!open.has(path)) open.set(path, new Set());
    open.get(path).add(connection);
    if (plan.dropAfter === 0) return connection.drop();
    if (plan.end && plan.endAfter === undefined) {
      res.write(frame({ id: cursor ?? '0', event: 'stream.ended', data: plan.end, retry: plan.retry }));
      return connection.end();
    }
    if (cursor === undefined && liveOnly.has(path)) return;
    const backlog = logOf(path).filter((e) => cursor === undefined || BigInt(e.id) > BigInt(cursor));
    for (const entry of backlog) {
      if (res.writableEnded || res.destroyed) break;
      connection.send(entry);
    }
    if (backlog.length === 0 && finals.has(path)) connection.end();
  });

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Declares a stream at `path` (under /v1), with entries already in its log; `live`: without a cursor it starts at the next event. */
    stream(path, entries = [], { live = false } = {}) {
      const log = logOf(`/v1${path}`);
      if (live) liveOnly.add(`/v1${path}`);
      for (const entry of entries) this.push(path, entry.event, entry.data);
      return log;
    },
    /** Appends an event to a stream's log and sends it to every open connection of it. */
    push(path, event, data) {
      const log = logOf(`/v1${path}`);
      const entry = { id: String(log.length + 1), event, data };
      log.push(entry);
      for (const connection of [...(open.get(`/v1${path}`) ?? [])]) connection.send(entry);
      return entry;
    },
    /** Marks a stream's log complete: connections close after its last entry (a command's output after `exit`). */
    finish(path) {
      finals.add(`/v1${path}`);
      for (const connection of [...(open.get(`/v1${path}`) ?? [])]) connection.end();
    },
    /** How many connections are open on a stream now. */
    openCount: (path) => open.get(`/v1${path}`)?.size ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}
