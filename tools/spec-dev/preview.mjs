// The docs preview server of the spec-dev loop (127.0.0.1 only): the page, Redoc's standalone bundle, the
// last good spec bundle, and a server-sent-events stream that tells open pages to redraw.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { previewPage } from './preview-page.mjs';

const require = createRequire(import.meta.url);
// Redoc as `redocly build-docs` inlines it, from the Redocly CLI this repository pins (catalog:), so the
// preview renders exactly as `pnpm spec:docs` does and needs nothing from the network.
const REDOC = join(
  dirname(require.resolve('@redocly/cli/package.json')),
  'lib',
  'chunks',
  'redoc.standalone.js',
);

/**
 * @typedef {object} PreviewState
 * @property {number} version the last good bundle's number (0: none yet)
 * @property {string | null} bundledAt when it was bundled (ISO time)
 * @property {string | null} bundleError why the latest save does not bundle, if it does not
 * @property {{ running: boolean, code: number | null, output: string } | null} lint the latest lint run
 */

/**
 * Starts the preview server.
 *
 * @param {{ host: string, port: number, log?: (line: string) => void }} options
 * @returns {Promise<{ url: string, publish: (bundle: string) => void, drawn: (timeoutMs: number) => Promise<void>, update: (patch: Partial<PreviewState>) => void, close: () => Promise<void> }>}
 */
export async function startPreview({ host, port, log = () => {} }) {
  const redoc = readFileSync(REDOC);
  const page = previewPage();
  /** @type {PreviewState} */
  const state = { version: 0, bundledAt: null, bundleError: null, lint: null };
  let bundle = '';
  const clients = new Set();
  /** Waiters for a page to report that it has drawn a version: [version, resolve]. */
  let drawnWaiters = [];

  const send = (response) => {
    if (!response.writableEnded && !response.destroyed)
      response.write(`event: state\ndata: ${JSON.stringify(state)}\n\n`);
  };
  const broadcast = () => {
    for (const client of clients) send(client);
  };

  const server = createServer((request, response) => {
    // A page closed mid-answer is no error of the loop's.
    request.on('error', () => response.destroy());
    response.on('error', () => response.destroy());
    const path = new URL(request.url ?? '/', 'http://preview').pathname;
    if (path === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(page);
    } else if (path === '/redoc.standalone.js') {
      response.writeHead(200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'max-age=3600',
      });
      response.end(redoc);
    } else if (path === '/openapi.json' && bundle) {
      response.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
      });
      response.end(bundle);
    } else if (path === '/drawn' && request.method === 'POST') {
      // A page has drawn this version: the loop may now give the CPU to the mock and the linters.
      const version = Number(new URL(request.url ?? '/', 'http://preview').searchParams.get('v'));
      const ready = drawnWaiters.filter(([wanted]) => wanted <= version);
      drawnWaiters = drawnWaiters.filter(([wanted]) => wanted > version);
      for (const [, resolve] of ready) resolve();
      response.writeHead(204);
      response.end();
    } else if (path === '/events') {
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      clients.add(response);
      response.on('close', () => clients.delete(response));
      send(response);
    } else {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('not found\n');
    }
  });
  // Proxies and browsers drop a silent stream; a comment line every 15 s keeps it open.
  const keepAlive = setInterval(() => {
    for (const client of clients)
      if (!client.writableEnded && !client.destroyed) client.write(': keep-alive\n\n');
  }, 15_000);
  keepAlive.unref();

  await new Promise((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `the preview port ${host}:${port} is in use; pass --port (or SPEC_DEV_PORT) to pick another`,
            )
          : error,
      ),
    );
    server.listen(port, host, resolve);
  });
  server.on('error', (error) => log(`preview: ${error.message}`));
  const address = server.address();
  const url = `http://${host}:${typeof address === 'object' && address ? address.port : port}/`;

  return {
    url,
    publish(text) {
      bundle = text;
      state.version += 1;
      state.bundledAt = new Date().toISOString();
      state.bundleError = null;
      broadcast();
    },
    /**
     * Resolves once an open page has drawn the current version, at once when no page is open, or after
     * `timeoutMs` (a page in a background tab may never draw).
     */
    drawn(timeoutMs) {
      if (clients.size === 0) return Promise.resolve();
      const version = state.version;
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        drawnWaiters.push([
          version,
          () => {
            clearTimeout(timer);
            resolve();
          },
        ]);
      });
    },
    update(patch) {
      Object.assign(state, patch);
      broadcast();
    },
    async close() {
      clearInterval(keepAlive);
      for (const client of clients) client.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
