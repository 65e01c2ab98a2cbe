import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient } from '@svc/client/retry';
import { loadDocument } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { callTool } from '../src/call.js';
import { progressTracker } from '../src/progress.js';
import { buildTools } from '../src/tools.js';

const tools = new Map(buildTools(loadDocument()).map((t) => [t.name, t]));
const tool = (name: string) => {
  const found = tools.get(name);
  if (!found) throw new Error(name);
  return found;
};
const op = (state: string, progress: number, extra: object = {}) => ({
  id: '01m6ddfps70g9sk0sar56ypyzq2',
  workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
  type: 'computer.stop',
  state,
  target: { type: 'computer', id: '01m6cnenctgek8472bc9m7jfnzd' },
  created_by: '01m6b5cjm082dkpt9sxm0exnk3h',
  progress,
  created_at: '2026-11-03T10:00:00Z',
  updated_at: '2026-11-03T10:00:00Z',
  ...extra,
});
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'Request-Id': '01m6ty2frhn2f2c4v4t96368nge' },
  });

/** A client whose API answers the stop with `accepted`, then each poll with the next of `polls`. */
function api(polls: unknown[], seen: Request[] = []) {
  return createClient({
    baseUrl: 'http://api.test/v1',
    token: 't',
    retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    fetch: async (request) => {
      seen.push(request);
      if (request.method === 'POST') return json(202, { operations: [op('pending', 0)] });
      const next = polls.shift();
      if (next instanceof Error) throw next;
      return json(200, { operation: next ?? op('running', 50) });
    },
  });
}
const context = (extra: object = {}) => ({
  signal: new AbortController().signal,
  waitTimeoutMs: 5_000,
  minPollIntervalMs: 1,
  ...extra,
});
const texts = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : ''));

describe('callTool', () => {
  it('reports a failed operation as a tool error with the final records', async () => {
    const failed = op('failed', 40, {
      error: {
        code: 'internal',
        message: 'driver broke',
        details: {},
        request_id: '01m6ty2frhn2f2c4v4t96368nge',
      },
    });
    const result = await callTool(
      api([op('running', 20), failed]),
      tool('stop_computer'),
      { workspace: 'w', computer: 'c' },
      context(),
    );
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ operations: [failed] });
    expect(texts(result)[0]).toMatch(
      /^Not every operation succeeded: operation computer.stop \S+ failed \(40%\): internal: driver broke/,
    );
  });

  it('sends strictly rising progress, and none that would go back', async () => {
    const sent: [number, string][] = [];
    const polls = [op('running', 30), op('running', 30), op('running', 80), op('succeeded', 100)];
    const result = await callTool(
      api(polls),
      tool('stop_computer'),
      { workspace: 'w', computer: 'c' },
      context({ progress: async (p: number, m: string) => void sent.push([p, m]) }),
    );
    expect(result.isError).toBeUndefined();
    expect(sent.map(([p]) => p)).toEqual([0, 30, 80, 100]);
    expect(sent[1]?.[1]).toBe('computer.stop running (30%)');
  });

  it('waits through a state the spec does not list yet (x-extensible-enum) without crashing', async () => {
    const sent: string[] = [];
    const polls = [op('paused_for_review', 40, { type: 'computer.snapshot' }), op('succeeded', 100)];
    const result = await callTool(
      api(polls),
      tool('stop_computer'),
      { workspace: 'w', computer: 'c' },
      context({ progress: async (_p: number, m: string) => void sent.push(m) }),
    );
    expect(result.isError).toBeUndefined();
    expect(sent).toContain('computer.snapshot paused_for_review (40%)');
  });

  it('answers "still running" as a tool error when the wait times out', async () => {
    const result = await callTool(
      api([]),
      tool('stop_computer'),
      { workspace: 'w', computer: 'c' },
      context({ waitTimeoutMs: 50 }),
    );
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toMatch(/^Still running after 0 s/);
    expect((result.structuredContent as { operations: { state: string }[] }).operations[0]?.state).toBe(
      'running',
    );
  });

  it('tells how to retry safely when the API cannot be reached, with the key it sent', async () => {
    const seen: Request[] = [];
    const client = createClient({
      baseUrl: 'http://api.test/v1',
      token: 't',
      retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
      fetch: async (request) => {
        seen.push(request);
        throw new TypeError('fetch failed');
      },
    });
    const result = await callTool(
      client,
      tool('create_workspace'),
      { name: 'dev', idempotency_key: 'my-key-1' },
      context(),
    );
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toContain('call again with idempotency_key "my-key-1"');
    expect(seen.map((r) => r.headers.get('Idempotency-Key'))).toEqual(['my-key-1', 'my-key-1']);
  });

  it('sends path, query and body where the spec puts them', async () => {
    const seen: Request[] = [];
    const client = createClient({
      baseUrl: 'http://api.test/v1',
      token: 't',
      fetch: async (request) => {
        seen.push(request);
        return json(200, { computer: { id: 'x', name: 'renamed' } });
      },
    });
    await callTool(
      client,
      tool('update_computer'),
      { workspace: 'w', computer: 'c', name: 'renamed', labels: { a: 'b' } },
      context(),
    );
    expect(seen[0]?.method).toBe('PATCH');
    expect(new URL(seen[0]?.url ?? '').pathname).toBe('/v1/workspaces/w/computers/c');
    expect(await seen[0]?.json()).toEqual({ name: 'renamed', labels: { a: 'b' } });
  });
});

describe('progressTracker', () => {
  it('averages several operations', async () => {
    const sent: number[] = [];
    const a = op('running', 0, { id: 'a' });
    const b = op('running', 0, { id: 'b' });
    const track = progressTracker([a, b] as never, async (p) => void sent.push(p));
    await track.start();
    track.update({ ...a, progress: 100 } as never);
    track.update({ ...b, progress: 50 } as never);
    await track.flush();
    expect(sent).toEqual([0, 50, 75]);
  });
});

describe('long-running calls return the final resource', () => {
  const computer = (state: string) => ({
    id: '01m6cnenctgek8472bc9m7jfnzd',
    workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
    name: 'box',
    state,
    size: 'small',
    image: 'debian-13',
    labels: {},
    created_at: '2026-11-03T10:00:00Z',
    updated_at: '2026-11-03T10:00:00Z',
  });
  /** The API: the 202 with the computer as accepted, polls that finish, then `readBack` for the GET. */
  const apiWith = (accepted: object, readBack: () => Response, seen: Request[]) =>
    createClient({
      baseUrl: 'http://api.test/v1',
      token: 't',
      retry: false,
      fetch: async (request) => {
        seen.push(request);
        const path = new URL(request.url).pathname;
        if (request.method !== 'GET') return json(202, { ...accepted, operations: [op('pending', 0)] });
        if (path.startsWith('/v1/operations/')) return json(200, { operation: op('succeeded', 100) });
        return readBack();
      },
    });

  it('create: reads the new computer back by id once its operation succeeded', async () => {
    const seen: Request[] = [];
    const client = apiWith(
      { computer: computer('creating') },
      () => json(200, { computer: computer('running') }),
      seen,
    );
    const result = await callTool(
      client,
      tool('create_computer'),
      { workspace: 'w', name: 'box', size: 'small', image: 'debian-13' },
      context(),
    );
    expect(result.isError).toBeUndefined();
    expect((result.structuredContent as { computer: { state: string } }).computer.state).toBe('running');
    expect(new URL(seen.at(-1)?.url ?? '').pathname).toBe(
      '/v1/workspaces/w/computers/01m6cnenctgek8472bc9m7jfnzd',
    );
  });

  it('delete: a resource gone (404) keeps its snapshot and says so', async () => {
    const seen: Request[] = [];
    const gone = () =>
      json(404, { error: { code: 'not_found', message: 'no', details: {}, request_id: 'r' } });
    const client = apiWith({ computer: computer('deleting') }, gone, seen);
    const result = await callTool(
      client,
      tool('delete_computer'),
      { workspace: 'w', computer: 'box' },
      context(),
    );
    expect(result.isError).toBeUndefined();
    expect(texts(result)[0]).toMatch(/^Finished: The computer is gone \(404 on reading it back\)\./);
    expect(new URL(seen.at(-1)?.url ?? '').pathname).toBe('/v1/workspaces/w/computers/box');
  });
});

describe("get_computer waits for a computer's state (parameters from the spec)", () => {
  it('takes wait_for and wait, and one call is one request to the long poll', async () => {
    const get = tool('get_computer');
    const properties = get.inputSchema.properties as Record<string, { type?: string; maximum?: number }>;
    expect(properties.wait_for?.type).toBe('string');
    expect(properties.wait?.maximum).toBe(60);
    const seen: Request[] = [];
    const computer = {
      id: '01m6cnenctgek8472bc9m7jfnzd',
      workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
      name: 'box',
      state: 'running',
      size: 'small',
      image: 'ubuntu-2404',
      labels: {},
      created_at: '2026-11-03T10:00:00Z',
      updated_at: '2026-11-03T10:00:00Z',
    };
    const client = createClient({
      baseUrl: 'http://api.test/v1',
      token: 't',
      fetch: async (request) => {
        seen.push(request);
        return json(200, { computer });
      },
    });
    const result = await callTool(
      client,
      get,
      { workspace: 'dev', computer: 'box', wait_for: 'running,failed', wait: 30 },
      context(),
    );
    expect(result.isError).toBeFalsy();
    expect(seen).toHaveLength(1);
    const url = new URL(seen[0]!.url);
    expect(url.searchParams.get('wait_for')).toBe('running,failed');
    expect(url.searchParams.get('wait')).toBe('30');
  });
});
