// The mock of the spec-dev loop: the front of ../spec-mock.mjs on the mock's port, before Prism, as in
// `pnpm mock`. The front serves the event streams and byte bodies from the loop's latest good bundle,
// which the loop hands over in memory (no file is read while another process writes it), and proxies the
// rest to Prism for its request validation and answers.
//
// Prism takes seconds to load the full bundle, and restarting itself in place (its own file watch) left
// the port closed meanwhile. So each new bundle gets a new Prism on a free port, from a snapshot file of
// its own that never changes; the front keeps asking the previous Prism until the new one listens, then
// switches over and stops the previous one once its answers are out. Meanwhile, when the new bundle
// differs only in examples and prose, the front already answers with the new examples
// (../mock-examples.mjs), so a saved example is served as soon as it is bundled. A Prism that cannot load
// a bundle is logged and the previous one keeps answering; one that exits is started again on its bundle.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.mjs';
import { stopChild } from '../child-process.mjs';
import { freePort, startStreamFront } from '../spec-mock.mjs';

const require = createRequire(import.meta.url);
const prismPackage = require.resolve('@stoplight/prism-cli/package.json');
const prismCli = join(dirname(prismPackage), require(prismPackage).bin.prism);

/** How long a Prism may take to load a bundle and listen before it is given up (two busy cores). */
const START_TIMEOUT_MS = 120_000;
/** How long a replaced Prism may take to finish the answers it was asked for before it is stopped. */
const DRAIN_TIMEOUT_MS = 10_000;
/** Restarts of a Prism that keeps exiting before the loop stops trying (until the next bundle). */
const MAX_RESTARTS = 5;

/**
 * @typedef {object} Bundle a good bundle as the loop hands it over: parsed, and as written
 * @property {Record<string, any>} doc
 * @property {string} text
 */

/**
 * @typedef {object} Prism one Prism process and the bundle it loaded
 * @property {import('node:child_process').ChildProcess} child
 * @property {string} url
 * @property {Bundle} bundle
 * @property {string} file its snapshot of the bundle
 * @property {boolean} retired replaced or stopped on purpose: its exit is expected
 */

/**
 * Starts the front on host:port at once (it answers 502 until the first Prism listens); Prism starts on
 * the first {@link reload}.
 *
 * @param {{ stagingDir: string, host: string, port: number, log: (line: string) => void }} options
 *   `stagingDir`: where the Prisms' snapshots go (the loop's dist/.spec-dev/)
 * @returns {Promise<{ ready: Promise<void>, update: (bundle: Bundle) => void, reload: () => void, close: () => Promise<void> }>}
 * @example
 * const mock = await startMock({ stagingDir, host: '127.0.0.1', port: 4010, log: console.log });
 * mock.update({ doc, text }); // the front answers the new examples now
 * mock.reload(); // and a Prism on this bundle takes over when it listens
 */
export async function startMock({ stagingDir, host, port, log }) {
  /** @type {Bundle | null} */
  let latest = null;
  /** @type {Prism | null} */
  let active = null;
  /** @type {Bundle | null} the bundle a Prism should load next */
  let wanted = null;
  /** @type {Bundle | null} the last bundle a Prism could not load: not tried again until another comes */
  let refused = null;
  /** @type {Set<Prism>} */
  const running = new Set();
  let pumping = false;
  let closing = false;
  let generation = 0;
  let restarts = 0;
  const url = `http://${host}:${port}`;
  let markReady;
  const ready = new Promise((resolve) => {
    markReady = resolve;
  });

  const front = await startStreamFront({
    document: () => latest?.doc ?? {},
    served: () => active?.bundle.doc ?? latest?.doc ?? {},
    // Port 1 on the host: nothing listens, so the front answers 502 "not answering" until a Prism does.
    upstream: () => active?.url ?? `http://${host}:1`,
    host,
    port,
  });

  /** Starts a Prism on `bundle`; resolves once it listens, rejects when it exits first or takes too long. */
  const launch = async (bundle) => {
    generation += 1;
    const file = join(stagingDir, `mock-${process.pid}-${generation}.json`);
    await writeFileAtomic(file, bundle.text);
    const inner = await freePort(host);
    const child = spawn(
      process.execPath,
      // --no-multiprocess: the child is the server itself, so stopping it by its pid stops the server.
      [
        prismCli,
        'mock',
        file,
        '--host',
        host,
        '--port',
        String(inner),
        '--cors',
        '--errors',
        '--no-multiprocess',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    /** @type {Prism} */
    const prism = { child, url: `http://${host}:${inner}`, bundle, file, retired: false };
    running.add(prism);
    let tail = [];
    let listening = false;
    return await new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error === undefined) {
          listening = true;
          resolve(prism);
        } else {
          void retire(prism);
          reject(error);
        }
      };
      const timer = setTimeout(
        () => settle(new Error(`it did not listen within ${START_TIMEOUT_MS / 1000} s`)),
        START_TIMEOUT_MS,
      );
      const read = (chunk) => {
        for (const line of chunk.toString().split('\n')) {
          if (!line.trim()) continue;
          if (/Prism is listening/.test(line)) settle();
          else if (listening) {
            if (/\b(error|fatal|warn)/i.test(line)) log(`mock │ ${line.trim()}`);
          } else if (/^\[[^\]]*\].*(✖|\bfatal\b)/.test(line)) {
            // Why it would not start: its fatal lines, without their time (not its usage text).
            tail = [
              ...tail.slice(-2),
              line
                .replace(/^\[[^\]]*\]\s*›?\s*/, '')
                .replace(/\s+/g, ' ')
                .trim(),
            ];
          }
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.stdout.on('error', () => {});
      child.stderr.on('error', () => {});
      child.on('error', (error) => settle(error));
      child.on('exit', (code, signal) => {
        running.delete(prism);
        // A snapshot that cannot be removed is left in dist/.spec-dev/, not thrown.
        rm(file, { force: true }).catch(() => {});
        const wasListening = listening;
        settle(
          new Error(`it exited (${signal ?? `code ${code}`})${tail.length ? `: ${tail.join('; ')}` : ''}`),
        );
        if (wasListening && !prism.retired && !closing) exited(prism, code, signal);
      });
    });
  };

  /** An active Prism exited on its own: start one again on its bundle (or the newer one waiting). */
  const exited = (prism, code, signal) => {
    if (active !== prism) return;
    active = null;
    restarts += 1;
    if (restarts > MAX_RESTARTS) {
      log(`mock: Prism exited ${MAX_RESTARTS} times; it is started again on the next good save`);
      return;
    }
    log(`mock: Prism exited (${signal ?? `code ${code}`}); starting it again on the last good bundle`);
    // The newer bundle waiting, if any; the one it ran on when the newer one would not load.
    if (wanted === null || wanted === refused) wanted = prism.bundle;
    setTimeout(pump, 500 * restarts).unref();
  };

  /** Stops a Prism once the front has no answer of it under way (bounded), and removes its snapshot. */
  const retire = async (prism) => {
    prism.retired = true;
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (!closing && front.pending(prism.url) > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      await stopChild(prism.child, { killAfterMs: 3_000 });
    } catch {
      // Exited between the check and the signal.
    }
    running.delete(prism);
    await rm(prism.file, { force: true }).catch(() => {});
  };

  /** Starts a Prism for the wanted bundle, one at a time; saves meanwhile coalesce into the latest. */
  const pump = async () => {
    if (pumping) return;
    pumping = true;
    try {
      while (!closing && wanted !== null && wanted !== active?.bundle && wanted !== refused) {
        const bundle = wanted;
        const started = performance.now();
        let next;
        try {
          next = await launch(bundle);
        } catch (error) {
          if (closing) break;
          refused = bundle;
          log(
            `mock: Prism could not load the new bundle (${error.message}); ${active ? 'the mock keeps answering from the last bundle Prism loaded' : 'the mock answers 502 until a bundle loads'}`,
          );
          continue;
        }
        if (closing) {
          await retire(next);
          break;
        }
        const previous = active;
        active = next;
        restarts = 0;
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        log(`mock ${previous ? 'reloaded' : 'ready'}: ${url} (Prism loaded the bundle in ${seconds} s)`);
        markReady();
        if (previous) void retire(previous);
      }
    } finally {
      pumping = false;
    }
  };

  return {
    ready,
    update(bundle) {
      latest = bundle;
    },
    reload() {
      if (latest === null || latest === wanted) return;
      wanted = latest;
      void pump();
    },
    async close() {
      closing = true;
      await front.close();
      await Promise.all([...running].map((prism) => retire(prism)));
    },
  };
}
