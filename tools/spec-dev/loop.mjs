// The designer's watch loop behind `pnpm spec:dev`: on each save under spec/ (debounced), bundle, redraw
// the preview, hand the bundle to the mock, then lint. An invalid spec never stops it: the error goes to
// the terminal and the preview, and the preview and the mock keep the last good bundle. Nor does anything
// else: every child process and stream handles its errors where it is created, every wait is bounded,
// and the bundle goes from one part to the next in memory; the files other processes read (dist/) are
// renamed into place.
import { join, relative, sep } from 'node:path';
import { watch } from 'chokidar';
import { bundleJson, bundleYaml, installBundle } from './bundle.mjs';
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
  const preview = await startPreview({ host, port, log });
  const mockServer = mock ? await startMockOn({ specDir, host, mockPort, log, preview }) : null;
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

  /** Writes a good bundle where `@svc/spec`'s build puts it; a failure is reported, not thrown. */
  const install = async (ext, text) => {
    try {
      await installBundle({ specDir, ext, text });
    } catch (error) {
      log(`could not write dist/openapi.${ext} (${error.message}); the preview and the mock have the bundle`);
    }
  };

  const cycle = async (reason) => {
    const started = performance.now();
    lint?.cancel();
    const json = await bundleJson({ specDir });
    if (closed) return;
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
      // The mock's front answers from it at once (new examples included); Prism follows below.
      mockServer?.update(json);
    } else {
      preview.update({ bundleError: null });
    }
    log(
      `bundled in ${Math.round(performance.now() - started)} ms (${reason}); ${changed ? 'sent to the preview' : 'no change to show'}`,
    );
    // The open previews draw first; Prism's reload, the files and the linters wait for them (at most
    // 2 s), so that on two cores they do not slow down the redraw the designer is watching.
    if (changed) await preview.drawn(2_000);
    if (closed) return;
    mockServer?.reload();
    await install('json', json.text);
    await install('yaml', bundleYaml(json.doc));
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
  // A watch that fails (too many files for inotify, a folder gone) is reported; the loop goes on.
  watcher.on('error', (error) => log(`watching ${specDir}: ${error.message ?? error}`));
  watcher.on('all', (_event, path) => {
    if (closed) return;
    clearTimeout(timer);
    const file = relative(specDir, path).split(sep).join('/');
    timer = setTimeout(() => schedule(`saved ${file}`), debounceMs);
  });

  schedule('start');
  await running;
  if (mockServer) {
    let timer;
    await Promise.race([mockServer.ready, new Promise((resolve) => (timer = setTimeout(resolve, 30_000)))]);
    clearTimeout(timer);
  }

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

/** The mock on its port, its Prisms' snapshots under dist/.spec-dev/; a port in use is said plainly. */
async function startMockOn({ specDir, host, mockPort, log, preview }) {
  try {
    return await startMock({ stagingDir: join(specDir, 'dist', '.spec-dev'), host, port: mockPort, log });
  } catch (error) {
    await preview.close();
    if (error.code === 'EADDRINUSE')
      throw new Error(
        `the mock port ${host}:${mockPort} is in use; pass --mock-port (or SPEC_DEV_MOCK_PORT) to pick another`,
      );
    throw error;
  }
}
