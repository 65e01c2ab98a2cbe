// A tiny static server for the page: index.html and the bundled dist/app.js. `node server.mjs [port]`.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['dist/app.js', 'text/javascript; charset=utf-8'],
  '/app.js.map': ['dist/app.js.map', 'application/json'],
};

/**
 * Serves the page on 127.0.0.1 (port 0: a free one). Resolves with its URL and a close function.
 * @param {number} [port]
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export function startServer(port = 0) {
  const server = createServer(async (request, response) => {
    const entry = FILES[new URL(request.url ?? '/', 'http://x').pathname];
    if (!entry) return response.writeHead(404).end('not found');
    try {
      const body = await readFile(fileURLToPath(new URL(entry[0], import.meta.url)));
      response.writeHead(200, { 'Content-Type': entry[1], 'Cache-Control': 'no-store' }).end(body);
    } catch {
      response.writeHead(500).end(`${entry[0]} is missing: run pnpm --filter @svc/example-web build`);
    }
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve({
        url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await startServer(Number(process.argv[2] ?? 5173));
  console.log(`Page: ${url}/?api=http://127.0.0.1:4010&workspace=acme-dev (start the mock with pnpm mock)`);
}
