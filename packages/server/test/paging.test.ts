import { describe, expect, test } from 'vitest';
import { Cursors, type PageRequest, pageRequest, samePageRequest } from '../src/platform/paging.js';

const cursors = new Cursors(new Uint8Array(32).fill(7));
const binding = {
  op: 'listComputers',
  workspace: 'w-1',
  state: null,
  label: 'tier=gold',
  include_deleted: false,
};
const ID = '01m6nnv61pvqsr3y70m1a27bndw';

describe('samePageRequest', () => {
  const page = pageRequest(cursors, {}, binding);
  test.each<[string, { given: PageRequest; want: boolean }]>([
    ['the same request made again', { given: pageRequest(cursors, {}, { ...binding }), want: true }],
    ['another limit', { given: pageRequest(cursors, { limit: 10 }, binding), want: false }],
    [
      'after an id',
      { given: pageRequest(cursors, { cursor: cursors.sign(ID, binding) }, binding), want: false },
    ],
    ['another filter', { given: pageRequest(cursors, {}, { ...binding, state: 'running' }), want: false }],
    ['a filter more', { given: pageRequest(cursors, {}, { ...binding, name: 'x' }), want: false }],
    [
      'a filter fewer',
      {
        given: pageRequest(
          cursors,
          {},
          { op: 'listComputers', workspace: 'w-1', state: null, label: 'tier=gold' },
        ),
        want: false,
      },
    ],
    ['another workspace', { given: pageRequest(cursors, {}, { ...binding, workspace: 'w-2' }), want: false }],
  ])('%s', (_, { given, want }) => {
    expect(samePageRequest(page, given)).toBe(want);
    expect(samePageRequest(given, page)).toBe(want);
  });
});
