// Measures what the HTTP layer costs, in ONE run, against bare node:http:
//   bare       node:http, a hello JSON handler (the ceiling)
//   hono       Hono's router + @hono/node-server, a hello JSON route (option a)
//   core+hono  our spec core (router, validation, CORS, Request-Id) on @hono/node-server's adapter (option b)
//   core+own   the same core on a minimal own adapter: IncomingMessage → Request → Response → ServerResponse (option c)
// The core variants answer GET /v1/me with the spec's own example body. Each server runs in its own
// child process; autocannon runs here. Usage: node bench/framework.mjs [--duration 10] [--connections 50]
import { fork } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');
const out = join(pkg, 'node_modules', '.cache', 'http-bench'); // inside the package so @svc/contract resolves

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
  },
});

/**
 * Transpiles src/http/*.ts and the three modules of src/platform/ it loads (ids, errors, request ids; types
 * stripped, nothing else): no build step needed.
 */
async function transpile() {
  const ts = (await import('typescript')).default;
  const httpFiles = readdirSync(join(pkg, 'src', 'http')).filter((f) => f.endsWith('.ts'));
  mkdirSync(join(out, 'http'), { recursive: true });
  mkdirSync(join(out, 'platform'), { recursive: true });
  const platformFiles = ['ids.ts', 'errors.ts', 'request-id.ts'].map((f) => join('platform', f));
  for (const file of [...httpFiles.map((f) => join('http', f)), ...platformFiles]) {
    const { outputText } = ts.transpileModule(readFileSync(join(pkg, 'src', file), 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    writeFileSync(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
}

async function core() {
  const { loadDocument } = await import('@svc/contract');
  const { createHttpCore } = await import(join(out, 'http', 'pipeline.js'));
  const document = loadDocument();
  const media = document.paths['/me'].get.responses['200'].content['application/json'];
  const identity = Object.values(media.examples)[0].value;
  return createHttpCore({ document, handle: (ctx) => ctx.json(200, identity) });
}

/** Option (c): the smallest honest adapter — real Request/Response objects, streamed bodies, abort on close. */
function ownAdapter(fetch) {
  return createServer((req, res) => {
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
      method: req.method,
      headers,
      signal: controller.signal,
      ...(hasBody ? { body: Readable.toWeb(req), duplex: 'half' } : {}),
    });
    fetch(request).then(async (response) => {
      const outHeaders = {};
      for (const [k, v] of response.headers) outHeaders[k] = v;
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) outHeaders['set-cookie'] = cookies;
      if (response.body === null) return void res.writeHead(response.status, outHeaders).end();
      const body = new Uint8Array(await response.arrayBuffer());
      res.writeHead(response.status, { ...outHeaders, 'content-length': body.byteLength }).end(body);
    });
  });
}

const SERVERS = {
  async bare() {
    const body = JSON.stringify({ hello: 'world' });
    return createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  },
  async hono() {
    const { Hono } = await import('hono');
    const { createAdaptorServer } = await import('@hono/node-server');
    const app = new Hono();
    app.get('/v1/me', (c) => c.json({ hello: 'world' }));
    return createAdaptorServer({ fetch: app.fetch });
  },
  async 'core+hono'() {
    const { createAdaptorServer } = await import('@hono/node-server');
    return createAdaptorServer({ fetch: await core() });
  },
  async 'core+own'() {
    return ownAdapter(await core());
  },
};

if (values.serve) {
  const server = await SERVERS[values.serve]();
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
} else {
  await transpile();
  const autocannon = (await import('autocannon')).default;
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  const results = [];
  for (const name of Object.keys(SERVERS)) {
    const child = fork(fileURLToPath(import.meta.url), ['--serve', name], { stdio: 'inherit' });
    const port = await new Promise((resolve) => child.once('message', (m) => resolve(m.port)));
    const url = `http://127.0.0.1:${port}/v1/me`;
    const check = await fetch(url);
    if (check.status !== 200)
      throw new Error(`${name}: GET /v1/me answered ${check.status}: ${await check.text()}`);
    await autocannon({ url, connections, duration: 2 }); // warm-up: JIT, pools
    const r = await autocannon({ url, connections, duration });
    child.kill();
    results.push({ name, rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx });
  }
  const bare = results[0];
  console.log(`autocannon -c ${connections} -d ${duration}s GET /v1/me (node ${process.version})`);
  console.log('| server | req/s | p99 ms | × bare req/s | errors |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${Math.round(r.rps)} | ${r.p99} | ${(r.rps / bare.rps).toFixed(2)} | ${r.errors} |`,
    );
  }
}
