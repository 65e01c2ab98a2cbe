import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { CLIENT_VERSION } from '../src/index.js';

// The browser-safe core cannot read its package.json at run time, and tsc (rootDir src) cannot import
// it at build time, so the constant is kept by hand and this test fails the day they drift.
test('CLIENT_VERSION (and so the svc-client/<version> User-Agent) is this package’s version', () => {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  expect(CLIENT_VERSION).toBe(version);
});
