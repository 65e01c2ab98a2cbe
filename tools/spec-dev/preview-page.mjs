// The docs preview page: Redoc (the renderer `redocly build-docs` uses) drawing the last good bundle, a
// status bar with the bundle and lint state, and a server-sent-events listener that redraws on each save.

/** Redoc's options: those `redocly build-docs` passes, with telemetry off. */
const REDOC_OPTIONS = { jsonSamplesExpandLevel: 3, disableTelemetry: true };

/** After this many in-place redraws the page reloads itself, dropping the detached Redoc trees. */
const RELOAD_EVERY = 25;

// Runs in the browser. Kept as a function so that Biome checks it; serialized into the page.
function client(options, reloadEvery) {
  const status = document.getElementById('spec-dev-status');
  let shown = 0;
  let wanted = 0;
  let drawing = false;
  let draws = 0;

  function line(className, text) {
    const element = document.createElement('div');
    element.className = className;
    element.textContent = text;
    return element;
  }

  function showState(state) {
    const parts = [
      line('head', `spec:dev · bundle ${state.version} · ${state.bundledAt ?? 'not bundled yet'}`),
    ];
    if (state.bundleError) {
      parts.push(
        line('error-title', 'The spec does not bundle; the preview and the mock keep the last good version.'),
      );
      parts.push(line('error', state.bundleError));
    }
    const lint = state.lint;
    if (lint) {
      const summary = lint.running
        ? 'lint: running…'
        : `lint: ${lint.code === 0 ? 'passed' : `failed (exit ${lint.code})`}`;
      const details = document.createElement('details');
      details.open = !lint.running && lint.code !== 0;
      const title = document.createElement('summary');
      title.textContent = summary;
      details.append(title, line('lint', lint.output || '(no output)'));
      parts.push(details);
    }
    status.replaceChildren(...parts);
    status.dataset.state = state.bundleError ? 'error' : 'ok';
  }

  async function draw() {
    if (drawing) return;
    drawing = true;
    try {
      while (shown < wanted) {
        const version = wanted;
        if (draws >= reloadEvery) {
          location.reload();
          return;
        }
        const response = await fetch(`/openapi.json?v=${version}`, { cache: 'no-store' });
        const spec = await response.json();
        const next = document.createElement('div');
        next.id = 'redoc';
        const scroll = window.scrollY;
        document.getElementById('redoc').replaceWith(next);
        await window.Redoc.init(spec, options, next);
        setTimeout(() => window.scrollTo(0, scroll), 50);
        shown = version;
        draws += 1;
        document.body.dataset.version = String(version);
        // Tells the loop that the new docs are on screen, so it starts the mock reload and the linters.
        requestAnimationFrame(() => fetch(`/drawn?v=${version}`, { method: 'POST' }).catch(() => {}));
      }
    } finally {
      drawing = false;
    }
  }

  const events = new EventSource('/events');
  events.addEventListener('state', (event) => {
    const state = JSON.parse(event.data);
    showState(state);
    wanted = Math.max(wanted, state.version);
    draw().catch((error) => status.append(line('error', `The preview could not draw the bundle: ${error}`)));
  });
  events.addEventListener('error', () => {
    status.dataset.state = 'error';
  });
}

/**
 * The preview's HTML.
 *
 * @returns {string}
 */
export function previewPage() {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>spec:dev preview</title>
<style>
  body { margin: 0; }
  #spec-dev-status { position: fixed; right: 12px; bottom: 12px; z-index: 10000; max-width: min(720px, 90vw);
    max-height: 60vh; overflow: auto; font: 12px/1.4 ui-monospace, monospace; background: #fff;
    border: 1px solid #ccc; border-left: 4px solid #2a7; padding: 6px 10px; box-shadow: 0 2px 8px #0002; }
  #spec-dev-status[data-state="error"] { border-left-color: #c22; }
  #spec-dev-status .error-title { color: #c22; font-weight: bold; margin-top: 4px; }
  #spec-dev-status .error, #spec-dev-status .lint { white-space: pre-wrap; margin: 4px 0; }
  #spec-dev-status .error { color: #c22; }
</style>
</head>
<body>
<div id="spec-dev-status">spec:dev · waiting for the first bundle…</div>
<div id="redoc"></div>
<script type="module">
import * as Redoc from '/redoc.standalone.js';
window.Redoc = Redoc;
(${client.toString()})(${JSON.stringify(REDOC_OPTIONS)}, ${RELOAD_EVERY});
</script>
</body>
</html>
`;
}
