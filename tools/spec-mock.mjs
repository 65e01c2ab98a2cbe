#!/usr/bin/env node
// `pnpm mock`: Prism, with a small front that serves the event streams Prism cannot.
//
//   node tools/spec-mock.mjs <bundle> [--host 127.0.0.1] [--port 4010] [--dynamic|-d] [other prism mock flags]
//
// Prism answers a `text/event-stream` example with 500 ("Cannot serialise complex objects as text"), so
// the front listens on the mock's port, runs `prism mock` on a free one with the same flags, and:
//   - a GET to a stream operation (a GET whose 200 answers text/event-stream) goes to Prism first, which
//     checks it as for any operation (security, parameters, `Prefer: code=…`): any answer but that one
//     is passed on as it is (401 without a Bearer, 400 for a bad `after`); otherwise the front answers
//     200 itself, with Prism's headers (`Request-Id`, `RateLimit`, CORS) and an event stream: a keepalive
//     comment, the events of the operation's example (`Prefer: example=<name>`, else the first), or in
//     the dynamic mode one event per `oneOf` branch with data generated from its `contentSchema`, only
//     those after `Last-Event-ID` (else the `after` query parameter), then `: end`, and it closes;
//   - a byte operation (tools/mock-bytes.mjs) never has its bytes go through Prism: an upload of another
//     `Content-Type` is Prism's 415 and one over its `x-svc-max-bytes` (by `Content-Length`, else by
//     counting) Prism's 413 (`Prefer: code=…`), both in the published error shape; else the front reads
//     the bytes and Prism, given a placeholder body, checks the request and answers its JSON example. A
//     download goes to Prism to be checked the same way; any answer but its (failed) 200 is passed on,
//     else the front answers the example's bytes (`Prefer: example=…`) with `Content-Type`,
//     `Content-Length` and `ETag`;
//   - every other request is proxied to Prism unchanged, both ways.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { connect, createServer as createNetServer } from 'node:net';
import { dirname, join } from 'node:path';
import { JSONSchemaFaker } from 'json-schema-faker';
import { EVENT_STREAM, STREAM_ENDED } from '../spec/rules/lib/streams.js';
import { childEnv, stopChild } from './child-process.mjs';
import { byteOperations, downloadHeaders, mockBytes, PLACEHOLDER } from './mock-bytes.mjs';
import { currentExample, differOnlyInExamples } from './mock-examples.mjs';

/** Prism's problem type for a body it cannot write as text (its answer to every stream example). */
const CANNOT_SERIALISE = 'NO_COMPLEX_OBJECT_TEXT';
/** Headers of Prism's answer that describe its body, not the operation: the front writes its own. */
const BODY_HEADERS = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'date',
]);

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The stream operations of a bundle: for each, a matcher of its path and its events, both the
 * example's and one per branch (data from the branch's schema, for the dynamic mode).
 *
 * @param {Record<string, any>} doc a bundled OpenAPI 3.1 document
 * @returns {{ operationId: string, path: RegExp, examples: Record<string, any[]>, branches: { name: string, schema: any }[] }[]}
 */
export function streamOperations(doc) {
  const local = (node) => {
    if (typeof node?.$ref !== 'string') return node;
    return node.$ref
      .slice(2)
      .split('/')
      .reduce((at, key) => at?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
  };
  const streams = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const operation = item?.get;
    const media = local(operation?.responses?.['200'])?.content?.[EVENT_STREAM];
    if (media === undefined) continue;
    const itemSchema = local(local(media.schema)?.items) ?? {};
    const examples = Object.fromEntries(
      Object.entries(media.examples ?? {}).map(([name, example]) => [name, local(example)?.value ?? []]),
    );
    if (media.example !== undefined) examples.default = media.example;
    const branches = (itemSchema.oneOf ?? []).map((raw) => {
      const branch = local(raw);
      const event = branch.properties?.event ?? {};
      return {
        name: event.const ?? event.enum?.[0],
        schema: inline(doc, branch.properties?.data?.contentSchema ?? {}),
      };
    });
    // The server's last word comes last.
    branches.sort((a, b) => (a.name === STREAM_ENDED) - (b.name === STREAM_ENDED));
    const pattern = path
      .split(/(\{[^}]+\})/)
      .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : escapeRegExp(part)))
      .join('');
    streams.push({
      operationId: operation.operationId,
      path: new RegExp(`^${pattern}$`),
      examples,
      branches,
    });
  }
  return streams;
}

/** `schema` with every local `$ref` replaced by its target (json-schema-faker is given no document). */
function inline(doc, schema, seen = []) {
  if (Array.isArray(schema)) return schema.map((s) => inline(doc, s, seen));
  if (schema === null || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string') {
    if (seen.includes(schema.$ref)) return {};
    const target = schema.$ref
      .slice(2)
      .split('/')
      .reduce((at, key) => at?.[key], doc);
    const { $ref, ...siblings } = schema;
    return inline(doc, { ...target, ...siblings }, [...seen, $ref]);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inline(doc, value, seen)]));
}

/**
 * The events a stream sends: the example's as written, or in the dynamic mode one per branch, ids from
 * 1, data generated from the branch's schema.
 */
export function streamEvents(stream, { dynamic = false, example } = {}) {
  if (!dynamic) return stream.examples[example] ?? Object.values(stream.examples)[0] ?? [];
  JSONSchemaFaker.option({ alwaysFakeOptionals: true, useExamplesValue: true, failOnInvalidTypes: false });
  return stream.branches.map(({ name, schema }, index) => ({
    event: name,
    id: String(index + 1),
    data: JSON.stringify(JSONSchemaFaker.generate(schema)),
  }));
}

/** One event in the SSE wire format (WHATWG HTML §9.2.5): `data` is one line (the spec's pattern). */
export function formatEvent({ event, id, data, retry }) {
  return `${retry === undefined ? '' : `retry: ${retry}\n`}id: ${id}\nevent: ${event}\ndata: ${data}\n\n`;
}

/** The events after a cursor (`Last-Event-ID`, else `after`): ids compare as numbers (they are digits). */
export function eventsAfter(events, cursor) {
  if (cursor === undefined || cursor === null || cursor === '') return events;
  const after = BigInt(cursor);
  return events.filter((e) => BigInt(e.id) > after);
}

/** How long the front waits for Prism's answer before it answers 504 itself: nothing waits forever. */
const PRISM_TIMEOUT_MS = 60_000;

/** A function of a bundle, computed once per bundle (the spec-dev loop hands over a new one per save). */
function perDocument(compute) {
  const cache = new WeakMap();
  return (doc) => {
    let value = cache.get(doc);
    if (value === undefined) {
      value = compute(doc);
      cache.set(doc, value);
    }
    return value;
  };
}
const streamsOf = perDocument(streamOperations);
const bytesOf = perDocument(byteOperations);

/** The front's own answer when it cannot give Prism's: plain text, or the connection cut once headers are out. */
function fail(res, status, message) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}

/**
 * Starts the front: an HTTP server on `host:port` in front of Prism at `upstream`, answering stream
 * operations itself and proxying the rest.
 *
 * For the spec-dev loop, `document` and `upstream` may be functions, read at each request: the latest
 * good bundle, and the Prism to ask (the loop starts a new Prism per bundle and switches over once it
 * listens). `served` then names the bundle that Prism has loaded: while it is older than `document` and
 * they differ only in examples and prose (tools/mock-examples.mjs), an answer Prism gave from one of its
 * examples carries the newer bundle's value of that example instead.
 *
 * Nothing a client, Prism or the bundle does throws out of the front: a bundle it cannot read answers
 * 500, a Prism that does not answer 502 (or 504 after a minute), a connection cut on either side ends the
 * other.
 *
 * @param {{ document: Record<string, any> | (() => Record<string, any>), upstream: string | (() => string), served?: () => Record<string, any>, host?: string, port?: number, dynamic?: boolean }} options
 * @returns {Promise<{ url: string, pending(upstream: string): number, close(): Promise<void> }>}
 * @example
 * const front = await startStreamFront({ document: bundle, upstream: 'http://127.0.0.1:4011', port: 4010 });
 * await front.close();
 */
export async function startStreamFront({
  document,
  upstream,
  served,
  host = '127.0.0.1',
  port = 0,
  dynamic = false,
}) {
  const documentNow = typeof document === 'function' ? document : () => document;
  const upstreamNow = typeof upstream === 'function' ? upstream : () => upstream;
  /** Requests under way per upstream, so that a Prism being replaced is stopped once it has answered. */
  const inFlight = new Map();
  const track = (key, res) => {
    inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    res.once('close', () => inFlight.set(key, (inFlight.get(key) ?? 1) - 1));
  };
  const server = createServer((req, res) => {
    res.on('error', () => res.destroy());
    req.on('error', () => res.destroy());
    try {
      handle(req, res);
    } catch (error) {
      fail(res, 500, `the mock could not answer from the bundle: ${error.message}`);
    }
  });
  const handle = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://front');
    const doc = documentNow();
    const prismDoc = served?.();
    const base = upstreamNow();
    const target = new URL(base);
    track(base, res);
    const bytes = bytesOf(doc).find((b) => b.method === req.method && b.path.test(url.pathname));
    if (bytes !== undefined) {
      answerBytes(bytes, req, res, target);
      return;
    }
    const stream = req.method === 'GET' ? streamsOf(doc).find((s) => s.path.test(url.pathname)) : undefined;
    const swap =
      stream === undefined &&
      prismDoc !== undefined &&
      prismDoc !== doc &&
      differOnlyInExamples(prismDoc, doc);
    const headers = { ...req.headers, host: target.host };
    // Prism only checks a stream request: its body is the front's. Generating one from the schema in
    // the dynamic mode (an array of up to `maxItems` events) takes Prism many seconds, for nothing.
    if (stream !== undefined)
      headers.prefer = [req.headers.prefer, 'dynamic=false'].filter(Boolean).join(', ');
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        timeout: PRISM_TIMEOUT_MS,
      },
      (answer) => {
        answer.on('error', () => res.destroy());
        answer.on('aborted', () => res.destroy());
        if (stream === undefined && !swap) {
          res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
          answer.pipe(res);
          return;
        }
        const chunks = [];
        answer.on('data', (chunk) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          if (stream === undefined) {
            const newer = newerExample({ prismDoc, doc, req, url, answer, body });
            const headers = answer.rawHeaders.filter((_, i, all) => {
              const name = all[i - (i % 2)].toLowerCase();
              return newer === undefined || (name !== 'content-length' && name !== 'transfer-encoding');
            });
            res.writeHead(
              answer.statusCode ?? 502,
              newer === undefined ? headers : [...headers, 'content-length', String(newer.length)],
            );
            res.end(newer ?? body);
            return;
          }
          const status = answer.statusCode ?? 502;
          const prismCannot = status === 500 && body.toString('utf8').includes(CANNOT_SERIALISE);
          if (!prismCannot && !(status >= 200 && status < 300)) {
            res.writeHead(status, answer.rawHeaders);
            res.end(body);
            return;
          }
          const headers = Object.fromEntries(
            Object.entries(answer.headers).filter(([name]) => !BODY_HEADERS.has(name)),
          );
          const prefer = preferredExample(req);
          const cursor = req.headers['last-event-id'] ?? url.searchParams.get('after') ?? undefined;
          const events = eventsAfter(streamEvents(stream, { dynamic, example: prefer }), cursor);
          res.writeHead(200, { ...headers, 'content-type': EVENT_STREAM, 'cache-control': 'no-store' });
          // A comment first, as the server sends every 15 s on an idle stream: clients must skip it.
          res.write(': keepalive\n\n');
          for (const event of events) res.write(formatEvent(event));
          res.end(': end\n\n');
        });
      },
    );
    forward.on('timeout', () => {
      forward.destroy();
      fail(res, 504, `the mock's Prism did not answer within ${PRISM_TIMEOUT_MS / 1000} s`);
    });
    forward.on('error', (error) => fail(res, 502, `the mock's Prism is not answering: ${error.message}`));
    // A client gone before the answer: Prism's request is dropped too.
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    req.pipe(forward);
  };
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return {
    url: `http://${host}:${typeof address === 'object' && address ? address.port : port}`,
    pending: (key) => inFlight.get(key) ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The example a request names in `Prefer: example=<name>`. */
function preferredExample(req) {
  return /(?:^|[,;\s])example=([^,;\s]+)/.exec(String(req.headers.prefer ?? ''))?.[1];
}

/**
 * The body of Prism's JSON answer with the newer bundle's value of the example it was given, or
 * `undefined` to send Prism's own (not JSON, not one of that answer's examples).
 */
function newerExample({ prismDoc, doc, req, url, answer, body }) {
  const mediaType = String(answer.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (!/^application\/(.+\+)?json$/.test(mediaType)) return undefined;
  let parsed;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const found = currentExample({
    served: prismDoc,
    current: doc,
    method: req.method ?? 'GET',
    pathname: url.pathname,
    status: answer.statusCode ?? 0,
    mediaType,
    body: parsed,
    preferred: preferredExample(req),
  });
  return found === undefined ? undefined : Buffer.from(JSON.stringify(found.value));
}

/** Prism's answer to a download it cannot give: its own 200 refused under `--errors` (response violations). */
function prismCannotAnswer(status, body) {
  if (status !== 500) return false;
  try {
    const problem = JSON.parse(body.toString('utf8'));
    const violations = Array.isArray(problem.validation) ? problem.validation : [];
    return violations.length > 0 && violations.every((v) => v.location?.[0] === 'response');
  } catch {
    return false;
  }
}

/**
 * A byte operation, answered by the front (see the top of this file): Prism checks the request with a
 * placeholder body and `Prefer: code=…` for a refused upload; the bytes never reach it.
 */
function answerBytes(operation, req, res, target) {
  const ask = (prefer, onAnswer) => {
    const headers = { ...req.headers, host: target.host };
    delete headers['transfer-encoding'];
    if (prefer !== undefined) headers.prefer = [req.headers.prefer, prefer].filter(Boolean).join(', ');
    if (operation.kind === 'upload') {
      headers['content-type'] = operation.mediaType;
      headers['content-length'] = String(PLACEHOLDER.length);
    }
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        timeout: PRISM_TIMEOUT_MS,
      },
      (answer) => {
        answer.on('error', () => res.destroy());
        answer.on('aborted', () => res.destroy());
        onAnswer(answer);
      },
    );
    forward.on('timeout', () => {
      forward.destroy();
      fail(res, 504, `the mock's Prism did not answer within ${PRISM_TIMEOUT_MS / 1000} s`);
    });
    forward.on('error', (error) => fail(res, 502, `the mock's Prism is not answering: ${error.message}`));
    forward.end(operation.kind === 'upload' ? PLACEHOLDER : undefined);
  };
  const passOn = (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
    answer.pipe(res);
  };
  if (operation.kind === 'download') {
    ask(undefined, (answer) => {
      const chunks = [];
      answer.on('data', (chunk) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = answer.statusCode ?? 502;
        if (!(status >= 200 && status < 300) && !prismCannotAnswer(status, body)) {
          res.writeHead(status, answer.rawHeaders);
          res.end(body);
          return;
        }
        const prism = Object.fromEntries(
          Object.entries(answer.headers).filter(
            ([name]) => !BODY_HEADERS.has(name) && name !== 'sl-violations',
          ),
        );
        const bytes = mockBytes(operation, preferredExample(req));
        res.writeHead(200, { ...prism, ...downloadHeaders(operation, bytes) });
        res.end(bytes);
      });
    });
    return;
  }
  // An upload: refused by its Content-Type or its declared length before a byte is read.
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  const length = Number(req.headers['content-length']);
  const refuse = (code) => {
    // The body is not read: the connection closes after the answer instead.
    res.setHeader('connection', 'close');
    ask(`code=${code}`, passOn);
  };
  if (type !== operation.mediaType) return refuse(415);
  const limit = operation.maxBytes ?? Number.POSITIVE_INFINITY;
  if (Number.isFinite(length) && length > limit) return refuse(413);
  let count = 0;
  let refused = false;
  req.on('data', (chunk) => {
    count += chunk.length;
    if (count > limit && !refused) {
      refused = true;
      req.pause();
      refuse(413);
    }
  });
  req.on('end', () => {
    if (!refused) ask(undefined, passOn);
  });
}

/** A free TCP port on `host`, found by binding port 0. */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Runs `prism mock <bundle> <flags>` on a free port and the front on `port`: `pnpm mock`, and the
 * contract suite's mock. Prism keeps every flag it is given (`--errors`, `--cors`, `-d`, `-v`).
 *
 * @param {{ bundle: string, host?: string, port?: number, flags?: string[], stdio?: 'inherit' | 'pipe' }} options
 * @returns {Promise<{ url: string, prismUrl: string, prism: import('node:child_process').ChildProcess, stop(): Promise<void> }>}
 */
export async function startMock({ bundle, host = '127.0.0.1', port = 4010, flags = [], stdio = 'inherit' }) {
  const require = createRequire(import.meta.url);
  const cli = join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');
  const inner = await freePort(host);
  const prism = spawn(
    process.execPath,
    [cli, 'mock', bundle, ...flags, '--host', host, '--port', String(inner)],
    {
      env: childEnv(),
      stdio: ['ignore', stdio, stdio],
    },
  );
  try {
    await untilListening(host, inner, prism, 90_000);
  } catch (error) {
    await stopChild(prism, { killAfterMs: 3000 });
    throw error;
  }
  const dynamic = flags.includes('-d') || flags.includes('--dynamic');
  const front = await startStreamFront({
    document: JSON.parse(readFileSync(bundle, 'utf8')),
    upstream: `http://${host}:${inner}`,
    host,
    port,
    dynamic,
  });
  return {
    url: front.url,
    prismUrl: `http://${host}:${inner}`,
    prism,
    stop: async () => {
      await front.close();
      await stopChild(prism, { killAfterMs: 3000 });
    },
  };
}

/** Resolves once something accepts connections on `host:port`; rejects when `child` exits or time is up. */
async function untilListening(host, port, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Prism exited with ${child.exitCode}`);
    const open = await new Promise((resolve) => {
      const socket = connect(port, host, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Prism did not listen on ${host}:${port} within ${timeoutMs} ms`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const take = (name, fallback) => {
    const at = args.indexOf(name);
    if (at === -1) return fallback;
    return args.splice(at, 2)[1];
  };
  const host = take('--host', '127.0.0.1');
  const port = Number(take('--port', '4010'));
  const [bundle, ...flags] = args;
  const mock = await startMock({ bundle, host, port, flags });
  console.log(`mock: ${mock.url} (Prism behind it; event streams and bytes served by the front)`);
  const stop = () => mock.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  mock.prism.on('exit', (code) => process.exit(code ?? 1));
}
