#!/usr/bin/env node
// `pnpm spec:dev`: the API designer's watch loop. On each save under spec/ it re-bundles (redocly bundle,
// as `@svc/spec`'s build), redraws a docs preview that refreshes itself in the browser, hands the new
// bundle to the mock (its examples at once, Prism's validation once a Prism has loaded it), and re-lints
// with the spec's own lint command, printing its findings.
//
//   node tools/spec-dev.mjs [--spec spec] [--host 127.0.0.1] [--port 4000] [--mock-port 4010]
//                           [--lint "pnpm --silent run lint"] [--no-mock] [--debounce 100]
//
// Environment: SPEC_DEV_PORT, SPEC_DEV_MOCK_PORT, SPEC_DEV_LINT stand in for the flags. Ctrl-C stops it.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSpecDev } from './spec-dev/loop.mjs';

const { values } = parseArgs({
  options: {
    spec: { type: 'string', default: fileURLToPath(new URL('../spec', import.meta.url)) },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: process.env.SPEC_DEV_PORT ?? '4000' },
    'mock-port': { type: 'string', default: process.env.SPEC_DEV_MOCK_PORT ?? '4010' },
    lint: { type: 'string', default: process.env.SPEC_DEV_LINT ?? 'pnpm --silent run lint' },
    'no-mock': { type: 'boolean', default: false },
    debounce: { type: 'string', default: '100' },
  },
});

const log = (line) => console.log(`[spec:dev] ${line}`);
try {
  const loop = await startSpecDev({
    specDir: values.spec,
    host: values.host,
    port: Number(values.port),
    mockPort: Number(values['mock-port']),
    mock: !values['no-mock'],
    lintCommand: values.lint,
    debounceMs: Number(values.debounce),
    log,
  });
  log(`preview ${loop.previewUrl}${loop.mockUrl ? ` · mock ${loop.mockUrl}` : ''} · watching ${values.spec}`);
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      log('stopping');
      // A child that does not stop within 10 s is left to the process's exit, not waited for.
      setTimeout(() => process.exit(1), 10_000).unref();
      await loop.close();
      process.exit(0);
    });
  }
} catch (error) {
  console.error(`[spec:dev] ${error.message}`);
  process.exit(1);
}
