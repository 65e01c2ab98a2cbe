import { listOperations, loadDocument } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../src/catalog.js';
import { DEFAULT_TOOLSETS, parseToolsets, toolsetOf } from '../src/toolsets.js';

const document = loadDocument();
const catalog = buildCatalog(document);
const KNOWN = ['identity', 'workspaces', 'computers', 'files', 'webhooks'];
const DEFAULTS = ['identity', 'computers', 'files'];

describe('parseToolsets', () => {
  it.each([
    ['absent: the default set', { given: undefined, want: { ok: true, toolsets: DEFAULTS } }],
    ['empty: the default set', { given: ' ', want: { ok: true, toolsets: DEFAULTS } }],
    ['all', { given: 'all', want: { ok: true, toolsets: KNOWN } }],
    [
      'named, in the known order',
      { given: 'webhooks,computers', want: { ok: true, toolsets: ['computers', 'webhooks'] } },
    ],
    [
      'default beside others',
      {
        given: 'default, webhooks',
        want: { ok: true, toolsets: ['identity', 'computers', 'files', 'webhooks'] },
      },
    ],
    ['repeated', { given: 'files,files,all', want: { ok: true, toolsets: KNOWN } }],
    [
      'unknown ones, named',
      { given: 'files,nope,Computers', want: { ok: false, unknown: ['nope', 'Computers'] } },
    ],
  ])('%s', (_, { given, want }) => expect(parseToolsets(KNOWN, given, DEFAULTS)).toEqual(want));
});

describe('toolsetOf', () => {
  it.each([
    ['a stream is in streams, whatever its tag', 'streamWorkspaceEvents', 'streams'],
    ['a command’s output too', 'streamOperationOutput', 'streams'],
    ['a file’s bytes are in files', 'downloadComputerFile', 'files'],
    ['so is what is beneath their path', 'listComputerFiles', 'files'],
    ['and a tar archive (no tool)', 'uploadComputerArchive', 'files'],
    ['else the first tag', 'execComputer', 'computers'],
    ['the first tag', 'getMe', 'identity'],
  ])('%s', (_, operationId, want) => {
    const op = listOperations(document).find((o) => o.operationId === operationId);
    if (!op) throw new Error(`${operationId} is gone from the spec`);
    expect(toolsetOf(document, op)).toBe(want);
  });
});

describe('the catalog’s toolsets', () => {
  it('has every default toolset, each with tools', () => {
    expect(catalog.defaultToolsets).toEqual(DEFAULT_TOOLSETS);
    for (const set of DEFAULT_TOOLSETS)
      expect(catalog.tools.filter((t) => t.toolset === set).length, set).toBeGreaterThan(0);
  });

  it('orders them as the spec’s tags, each derived one after the tag of its first tool', () => {
    expect(catalog.toolsets).toEqual([
      'identity',
      'workspaces',
      'streams',
      'members',
      'service-accounts',
      'keys',
      'computers',
      'screens',
      'files',
      'terminals',
      'snapshots',
      'operations',
      'catalog',
      'webhooks',
    ]);
  });

  it('lists the default set for a selection that names none, and caches per selection', () => {
    const none = catalog.list({ mode: 'compact' });
    expect(none).toBe(catalog.list({ mode: 'compact', toolsets: catalog.defaultToolsets }));
    expect(none.map((t) => t.name)).toEqual(
      catalog.tools.filter((t) => DEFAULT_TOOLSETS.includes(t.toolset)).map((t) => t.name),
    );
  });
});
