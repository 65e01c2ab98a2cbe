// The Prism mock of the spec-dev loop. Prism (`prism mock`) watches its document and reloads itself when
// the file changes, so the loop only rewrites dist/openapi.json with a good bundle; this module starts
// Prism, reports its reloads, and starts it again (on the last good bundle) if it ever exits. As in
// `pnpm mock`, Prism runs on a port of its own behind the front of ../spec-mock.mjs, which serves the
// event streams (from the document as it is at each request) and proxies the rest.
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort, startStreamFront } from '../spec-mock.mjs';

const require = createRequire(import.meta.url);
const prismPackage = require.resolve('@stoplight/prism-cli/package.json');
const prismCli = join(dirname(prismPackage), require(prismPackage).bin.prism);

/**
 * Starts `prism mock <document>` on host:port, as `pnpm mock` does (`--cors --errors`).
 *
 * @param {{ document: string, host: string, port: number, log: (line: string) => void }} options
 * @returns {{ ready: Promise<void>, close: () => Promise<void> }}
 */
export function startMock({ document, host, port, log }) {
  let child;
  let inner;
  let front;
  let cached = { mtime: -1, doc: {} };
  // The last good bundle, read again when the loop has rewritten it.
  const current = () => {
    const mtime = statSync(document).mtimeMs;
    if (mtime !== cached.mtime) cached = { mtime, doc: JSON.parse(readFileSync(document, 'utf8')) };
    return cached.doc;
  };
  let closing = false;
  let restarts = 0;
  let markReady;
  const ready = new Promise((resolve) => {
    markReady = resolve;
  });

  const start = () => {
    child = spawn(
      process.execPath,
      [prismCli, 'mock', document, '--host', host, '--port', String(inner), '--cors', '--errors'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    let reloading = false;
    const read = (chunk) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        if (/Restarting Prism/.test(line)) reloading = true;
        if (/Prism is listening/.test(line)) {
          log(reloading ? `mock reloaded: http://${host}:${port}` : `mock ready: http://${host}:${port}`);
          reloading = false;
          markReady();
        } else if (/\b(error|fatal|warn)/i.test(line)) {
          log(`mock │ ${line.trim()}`);
        }
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code, signal) => {
      if (closing) return;
      restarts += 1;
      log(`mock exited (${signal ?? `code ${code}`}); starting it again on the last good bundle`);
      if (restarts <= 5) setTimeout(start, 500 * restarts);
      else log('mock: gave up after 5 restarts; fix the error above and restart pnpm spec:dev');
    });
  };
  const started = (async () => {
    inner = await freePort(host);
    front = await startStreamFront({ document: current, upstream: `http://${host}:${inner}`, host, port });
    start();
  })();

  return {
    ready: started.then(() => ready),
    async close() {
      closing = true;
      await started.catch(() => {});
      await front?.close();
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
