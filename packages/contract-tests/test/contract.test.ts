// One contract suite for the Prism mock and a real server (CONTRACT_TARGET). The files in suites/ run in
// this order, in one module, so that the coverage check below sees every call the suite made. Each can
// run alone (`CONTRACT_SUITES=<name>[,<name>…]`): what it needs is made first (support/prepare.ts), and
// the coverage check runs only when every suite does.
import { streamOperationIds } from '@svc/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
import { type Need, prepare, tidy } from './support/prepare.js';
import { document, OPERATIONS, uncovered } from './support/spec-index.js';

afterEach(() => {
  // Every response of every test was validated against the spec by the client's fetch.
  expect(takeViolations()).toEqual([]);
});

/**
 * Every suite, in the order they run: what it needs made first (support/prepare.ts, when no earlier
 * suite made it), and the suites it reads what they leave (the streams suite reads a command's and a
 * terminal's output), which run with it.
 */
const SUITES: { name: string; title: string; body: () => void; needs: Need[]; after?: string[] }[] = [
  { name: 'access', title: 'access: health, tokens, identity', body: accessSuite, needs: [] },
  { name: 'catalog', title: 'catalog', body: catalogSuite, needs: [] },
  {
    name: 'workspaces',
    title: 'workspaces, service accounts, keys, members',
    body: workspacesSuite,
    needs: [],
  },
  { name: 'computers', title: 'computers and operations', body: computersSuite, needs: ['workspace'] },
  { name: 'files', title: 'files on computers: bytes in and out', body: filesSuite, needs: ['computer'] },
  {
    name: 'terminals',
    title: 'terminals: opened, typed into, resized, read as a screen, ended',
    body: terminalsSuite,
    needs: ['computer'],
  },
  {
    name: 'screens',
    title: 'screens and input: a picture out, actions in',
    body: screensSuite,
    needs: ['workspace'],
  },
  {
    name: 'snapshots',
    title: 'snapshots: made, listed, a computer created from one, deleted',
    body: snapshotsSuite,
    needs: ['computer'],
  },
  {
    name: 'streams',
    title: 'event streams: every event checked, resumption',
    body: streamsSuite,
    needs: ['computer'],
    after: ['computers', 'terminals'],
  },
  {
    name: 'webhooks',
    title: 'webhook endpoints, and a delivery checked against the webhooks section',
    body: webhooksSuite,
    needs: ['workspace'],
  },
  // These two read the service account the workspaces suite makes.
  {
    name: 'write-back',
    title: 'write then read back, every writable field',
    body: writeBackSuite,
    needs: ['computer'],
    after: ['workspaces'],
  },
  {
    name: 'server-only',
    title: 'needs a stateful server',
    body: serverOnlySuite,
    needs: ['computer'],
    after: ['workspaces'],
  },
  // Deletes what the workspaces suite made: it runs when that suite does.
  {
    name: 'cleanup',
    title: 'cleanup: deletes',
    body: cleanupSuite,
    needs: [],
    after: ['workspaces', 'computers'],
  },
];

/** `CONTRACT_SUITES=terminals,files`: those suites (and the ones they read after); unset: every suite. */
const chosen = process.env.CONTRACT_SUITES?.split(',')
  .map((name) => name.trim())
  .filter(Boolean);
const unknown = chosen?.filter((name) => !SUITES.some((suite) => suite.name === name)) ?? [];
if (unknown.length > 0)
  throw new Error(
    `CONTRACT_SUITES names ${unknown.join(', ')}; the suites are ${SUITES.map((s) => s.name).join(', ')}`,
  );
const running = new Set(chosen ?? SUITES.map((suite) => suite.name));
for (const suite of [...SUITES].reverse())
  if (running.has(suite.name)) for (const before of suite.after ?? []) running.add(before);
// Whatever made the workspaces suite run, its cleanup runs too (and what that deletes, the computers suite makes).
if (running.has('workspaces')) running.add('cleanup').add('computers');
const all = running.size === SUITES.length;

for (const suite of SUITES)
  if (running.has(suite.name))
    describe(suite.title, () => {
      beforeAll(() => prepare(suite.needs), 120_000);
      suite.body();
    });

// What prepare made for suites run alone; with every suite, the cleanup suite deletes what they made.
afterAll(() => tidy(), 300_000);

describe.runIf(all)('coverage', () => {
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
