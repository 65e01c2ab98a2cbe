// The Prism mock of the spec-dev loop. Prism (`prism mock`) watches its document and reloads itself when
// the file changes, so the loop only rewrites dist/openapi.json with a good bundle; this module starts
// Prism, reports its reloads, and starts it again (on the last good bundle) if it ever exits.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

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
  let closing = false;
  let restarts = 0;
  let markReady;
  const ready = new Promise((resolve) => {
    markReady = resolve;
  });

  const start = () => {
    child = spawn(
      process.execPath,
      [prismCli, 'mock', document, '--host', host, '--port', String(port), '--cors', '--errors'],
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
  start();

  return {
    ready,
    async close() {
      closing = true;
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
