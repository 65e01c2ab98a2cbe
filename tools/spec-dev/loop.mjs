// The designer's watch loop behind `pnpm spec:dev`: on each save under spec/ (debounced), bundle, redraw
// the preview, let Prism reload, then lint. An invalid spec never stops it: the error goes to the terminal
// and the preview, and the preview and the mock keep the last good bundle.
import { join, relative, sep } from 'node:path';
import { watch } from 'chokidar';
import { rootOf } from '../spec-bundle.mjs';
import { bundleJson, bundleWithCli, installBundle } from './bundle.mjs';
import { runLint } from './lint.mjs';
import { startMock } from './mock.mjs';
import { startPreview } from './preview.mjs';

/** Top-level folders of spec/ whose changes are outputs or tooling, not sources. */
const IGNORED_DIRS = new Set(['dist', 'node_modules', '.turbo']);
/** Editor droppings: swap, backup and lock files, and vim's write probe. */
const IGNORED_FILE = /(^|[/\\])(\.#|#)|(\.sw[a-p]|~|\.tmp|^4913)$/;

/**
 * @typedef {object} SpecDevOptions
 * @property {string} specDir the spec folder to watch (the repository's spec/ by default)
 * @property {string} host interface for the preview and the mock (127.0.0.1)
 * @property {number} port preview port (4000)
 * @property {number} mockPort Prism port (4010)
 * @property {boolean} mock whether to run Prism
 * @property {string} lintCommand shell line run in specDir after each bundle
 * @property {number} debounceMs quiet time after the last change before a rebuild
 * @property {(line: string) => void} log where status lines go
 */

/**
 * Starts the loop and resolves once the first bundle is drawn (or has failed).
 *
 * @param {SpecDevOptions} options
 * @returns {Promise<{ previewUrl: string, mockUrl: string | null, close: () => Promise<void> }>}
 */
export async function startSpecDev({ specDir, host, port, mockPort, mock, lintCommand, debounceMs, log }) {
  const root = rootOf(specDir);
  const preview = await startPreview({ host, port });
  let mockServer = null;
  let lint = null;
  let running = null;
  let again = false;
  let timer = null;
  let closed = false;
  let publishedText = '';

  const startLint = () => {
    lint?.cancel();
    const started = performance.now();
    log(`lint: ${lintCommand}`);
    preview.update({ lint: { running: true, code: null, output: '' } });
    const run = runLint({ command: lintCommand, cwd: specDir, onLine: (line) => console.log(line) });
    lint = run;
    run.done.then(({ code, output, cancelled }) => {
      if (cancelled || closed) return;
      log(`lint finished: exit ${code} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      preview.update({ lint: { running: false, code, output: output.trim() } });
    });
  };

  const cycle = async (reason) => {
    const started = performance.now();
    lint?.cancel();
    const json = await bundleJson({ specDir, root });
    if (!json.ok) {
      log(`bundle failed (${reason}); the preview and the mock keep the last good bundle:\n${json.error}`);
      preview.update({ bundleError: json.error });
      startLint();
      return;
    }
    const changed = json.text !== publishedText;
    if (changed) {
      preview.publish(json.text);
      publishedText = json.text;
    } else {
      preview.update({ bundleError: null });
    }
    log(
      `bundled in ${Math.round(performance.now() - started)} ms (${reason}); ${changed ? 'sent to the preview' : 'no change to show'}`,
    );
    // The open previews draw first; the mock's reload, the YAML bundle and the linters wait for them (at
    // most 2 s), so that on two cores they do not slow down the redraw the designer is watching.
    if (changed) await preview.drawn(2_000);
    await installBundle({ specDir, ext: 'json', text: json.text });
    if (mock && !mockServer) {
      mockServer = startMock({ document: join(specDir, 'dist', 'openapi.json'), host, port: mockPort, log });
    }
    const yaml = await bundleWithCli({ specDir, root, ext: 'yaml' });
    if (yaml.ok) await installBundle({ specDir, ext: 'yaml', text: yaml.text });
    else log(`YAML bundle failed:\n${yaml.error}`);
    startLint();
  };

  /** Runs one cycle at a time; saves during a cycle coalesce into one more. */
  const schedule = (reason) => {
    if (running) {
      again = true;
      return;
    }
    running = cycle(reason)
      .catch((error) => log(`spec:dev: ${error.stack ?? error}`))
      .finally(() => {
        running = null;
        if (again && !closed) {
          again = false;
          schedule('saved during the last build');
        }
      });
  };

  // chokidar, not fs.watch: Node's recursive fs.watch on Linux loses a file that an editor saves by
  // renaming a new copy over it (the usual "atomic save"), and stops reporting its changes.
  const watcher = watch(specDir, {
    ignoreInitial: true,
    ignored: (path) => {
      const file = relative(specDir, path);
      return IGNORED_DIRS.has(file.split(sep)[0] ?? '') || IGNORED_FILE.test(file);
    },
  });
  watcher.on('all', (_event, path) => {
    if (closed) return;
    clearTimeout(timer);
    const file = relative(specDir, path).split(sep).join('/');
    timer = setTimeout(() => schedule(`saved ${file}`), debounceMs);
  });

  schedule('start');
  await running;
  if (mockServer)
    await Promise.race([mockServer.ready, new Promise((resolve) => setTimeout(resolve, 30_000))]);

  return {
    previewUrl: preview.url,
    mockUrl: mock ? `http://${host}:${mockPort}` : null,
    async close() {
      closed = true;
      clearTimeout(timer);
      await watcher.close();
      lint?.cancel();
      await running;
      await Promise.all([mockServer?.close(), preview.close()]);
    },
  };
}
