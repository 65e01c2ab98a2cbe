// One contract suite for the Prism mock and a real server (CONTRACT_TARGET). The files in suites/ run in
// this order, in one module, so that the coverage check below sees every call the suite made.
import { streamOperationIds } from '@svc/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { accessSuite } from './suites/access.js';
import { catalogSuite } from './suites/catalog.js';
import { cleanupSuite } from './suites/cleanup.js';
import { computersSuite } from './suites/computers.js';
import { filesSuite } from './suites/files.js';
import { screensSuite } from './suites/screens.js';
import { serverOnlySuite } from './suites/server-only.js';
import { snapshotsSuite } from './suites/snapshots.js';
import { streamsSuite } from './suites/streams.js';
import { terminalsSuite } from './suites/terminals.js';
import { webhooksSuite } from './suites/webhooks.js';
import { workspacesSuite } from './suites/workspaces.js';
import { writeBackSuite } from './suites/write-back.js';
import { excused, exercised, takeViolations } from './support/harness.js';
import { document, OPERATIONS, uncovered } from './support/spec-index.js';

afterEach(() => {
  // Every response of every test was validated against the spec by the client's fetch.
  expect(takeViolations()).toEqual([]);
});

describe('access: health, tokens, identity', accessSuite);
describe('catalog', catalogSuite);
describe('workspaces, service accounts, keys, members', workspacesSuite);
describe('computers and operations', computersSuite);
describe('files on computers: bytes in and out', filesSuite);
describe('terminals: opened, typed into, resized, read as a screen, ended', terminalsSuite);
describe('screens and input: a picture out, actions in', screensSuite);
describe('snapshots: made, listed, a computer created from one, deleted', snapshotsSuite);
describe('event streams: every event checked, resumption', streamsSuite);
describe('webhook endpoints, and a delivery checked against the webhooks section', webhooksSuite);
describe('write then read back, every writable field', writeBackSuite);
describe('needs a stateful server', serverOnlySuite);
describe('cleanup: deletes', cleanupSuite);

describe('coverage', () => {
  it('exercises every operation of the bundled spec with a 2xx answer', () => {
    const missing = uncovered(exercised);
    const streams = streamOperationIds(document);
    // An operation whose test skipped itself, saying why (a setting of the target), is listed, not failed.
    const skipped = missing.filter((id) => excused.has(id));
    process.stdout.write(
      `\ncontract coverage: ${OPERATIONS.length - missing.length}/${OPERATIONS.length} operations` +
        ` (${streams.filter((id) => exercised.has(id)).length}/${streams.length} event streams read, every event checked)\n` +
        skipped.map((id) => `  not exercised, its test skipped: ${id}: ${excused.get(id)}\n`).join(''),
    );
    const unexplained = missing.filter((id) => !excused.has(id));
    expect(unexplained, `operations without a contract test: ${unexplained.join(', ')}`).toEqual([]);
  });
});
