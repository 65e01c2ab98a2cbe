// The checks the contract suite relies on must be able to fail: feed them broken answers.
import { describe, expect, it } from 'vitest';
import { responseViolations } from '../src/validate.js';
import { matchOperation, OPERATIONS, uncovered } from './support/spec-index.js';

const RID = '01m6ty2frhn2f2c4v4t96368nge';
const OP = '01m6ddfps70g9sk0sar56ypyzq2';
const computer = {
  id: '01m6cnenctgek8472bc9m7jfnzd',
  workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
  name: 'box',
  state: 'running',
  size: 'small',
  image: 'debian-13',
  labels: {},
  created_at: '2026-11-03T10:00:00Z',
  updated_at: '2026-11-03T10:00:00Z',
};
const operation = {
  id: OP,
  workspace_id: computer.workspace_id,
  type: 'computer.stop',
  state: 'pending',
  target: { type: 'computer', id: computer.id },
  created_by: '01m6b5cjm082dkpt9sxm0exnk3h',
  progress: 0,
  created_at: '2026-11-03T10:00:00Z',
  updated_at: '2026-11-03T10:00:00Z',
};
const error = { error: { code: 'not_found', message: 'gone', details: {}, request_id: RID } };
const json = { 'Content-Type': 'application/json', 'Request-Id': RID };

const cases: [
  string,
  {
    op: [string, string];
    status: number;
    headers?: Record<string, string>;
    body: unknown;
    cross?: boolean;
    want: RegExp | null;
  },
][] = [
  [
    'a valid computer',
    { op: ['GET', '/workspaces/w/computers/c'], status: 200, body: { computer }, want: null },
  ],
  [
    'a missing required field',
    {
      op: ['GET', '/workspaces/w/computers/c'],
      status: 200,
      body: { computer: { ...computer, state: undefined } },
      want: /must have required property 'state'/,
    },
  ],
  [
    'an unknown enum value is still schema-checked',
    {
      op: ['GET', '/workspaces/w/computers/c'],
      status: 200,
      body: { computer: { ...computer, id: 'X' } },
      want: /body\/computer\/id/,
    },
  ],
  [
    'an undeclared status',
    { op: ['GET', '/workspaces/w/computers/c'], status: 418, body: error, want: /not declared/ },
  ],
  [
    'no Request-Id header',
    {
      op: ['GET', '/workspaces/w/computers/c'],
      status: 404,
      headers: { 'Content-Type': 'application/json' },
      body: error,
      want: /Request-Id header missing/,
    },
  ],
  [
    'an error outside the envelope',
    {
      op: ['GET', '/workspaces/w/computers/c'],
      status: 404,
      body: { ...error, extra: 1 },
      want: /error envelope has keys/,
    },
  ],
  [
    'request_id differing from the header (cross-check)',
    {
      op: ['GET', '/workspaces/w/computers/c'],
      status: 404,
      headers: { ...json, 'Request-Id': OP },
      body: error,
      cross: true,
      want: /differs from Request-Id/,
    },
  ],
  [
    'a list whose next_cursor disagrees with has_more',
    {
      op: ['GET', '/workspaces/w/computers'],
      status: 200,
      body: { computers: [], next_cursor: null, has_more: true },
      want: /next_cursor null with has_more true/,
    },
  ],
  [
    'a 202 without Location',
    {
      op: ['POST', '/workspaces/w/computers/c/stop'],
      status: 202,
      body: { operations: [operation] },
      want: /202 Location is/,
    },
  ],
  [
    'a 202 whose Location names another operation (cross-check)',
    {
      op: ['POST', '/workspaces/w/computers/c/stop'],
      status: 202,
      headers: { ...json, 'Retry-After': '1', Location: `/v1/operations/${computer.id}` },
      body: { operations: [operation] },
      cross: true,
      want: /does not name the first operation/,
    },
  ],
  [
    'a valid 202',
    {
      op: ['POST', '/workspaces/w/computers/c/stop'],
      status: 202,
      headers: { ...json, 'Retry-After': '1', Location: `/v1/operations/${OP}` },
      body: { operations: [operation] },
      cross: true,
      want: null,
    },
  ],
  ['a body on a 204', { op: ['DELETE', '/workspaces/w'], status: 204, body: {}, want: /declares no body/ }],
];

describe('responseViolations', () => {
  it.each(cases)('%s', (_name, { op: [method, path], status, headers = json, body, cross = false, want }) => {
    const op = matchOperation(method, path)!;
    const problems = responseViolations(op, { status, headers: new Headers(headers) }, body, {
      crossChecks: cross,
    });
    if (want === null) expect(problems).toEqual([]);
    else expect(problems.join('\n')).toMatch(want);
  });
});

describe('operation matching and coverage', () => {
  it('prefers literal segments and knows every operation', () => {
    expect(matchOperation('POST', '/workspaces/w/computers/c/start')?.operationId).toBe('startComputer');
    expect(matchOperation('GET', '/workspaces/w/operations')?.operationId).toBe('listOperations');
    expect(matchOperation('GET', '/nope')).toBeUndefined();
  });

  it('reports an operation nobody exercised', () => {
    const all = new Set(OPERATIONS.map((op) => op.operationId));
    expect(uncovered(all)).toEqual([]);
    all.delete('restartComputer');
    expect(uncovered(all)).toEqual(['restartComputer']);
  });
});
