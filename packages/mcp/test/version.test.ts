import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { MCP_SERVER_VERSION } from '../src/index.js';

// The MCP server is bundled into `svc` too, where a run-time read of "../package.json" would find the
// CLI's manifest; so the constant is kept by hand and this test fails the day it drifts from ours.
test('MCP_SERVER_VERSION (serverInfo.version) is this package’s version', () => {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  expect(MCP_SERVER_VERSION).toBe(version);
});
