import { describe, expect, it } from 'vitest';
import { ApiError, createClient, paginate } from '../src/index.js';
import { BASE, errorBody, fakeFetch, json } from './helpers.js';

const computer = (n: number) => ({ id: `c${n}`, name: `box-${n}`, state: 'running', labels: {} });

/** Three pages of computers: c1-c2, c3-c4, c5, linked by cursors p2 and p3. */
function threePages() {
  const pages: Record<string, unknown> = {
    '': { computers: [computer(1), computer(2)], next_cursor: 'p2', has_more: true },
    p2: { computers: [computer(3), computer(4)], next_cursor: 'p3', has_more: true },
    p3: { computers: [computer(5)], next_cursor: null, has_more: false },
  };
  return fakeFetch((_r, seen) => json(200, pages[seen.search.get('cursor') ?? '']));
}

describe('paginate', () => {
  it('follows next_cursor to the end, keeping the filters on every page', async () => {
    const server = threePages();
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const names: string[] = [];
    for await (const c of paginate(client, '/workspaces/{workspace}/computers', {
      params: { path: { workspace: 'dev' }, query: { limit: 2, state: 'running' } },
    })) {
      names.push(c.name);
    }
    expect(names).toEqual(['box-1', 'box-2', 'box-3', 'box-4', 'box-5']);
    expect(server.seen.map((s) => s.path)).toEqual(Array(3).fill('/workspaces/dev/computers'));
    expect(server.seen.map((s) => s.search.toString())).toEqual([
      'limit=2&state=running',
      'limit=2&state=running&cursor=p2',
      'limit=2&state=running&cursor=p3',
    ]);
  });

  it('fetches no further page once the caller stops', async () => {
    const server = threePages();
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    for await (const c of paginate(client, '/workspaces/{workspace}/computers', {
      params: { path: { workspace: 'dev' } },
    })) {
      if (c.id === 'c2') break;
    }
    expect(server.seen).toHaveLength(1);
  });

  it.each([
    ['has_more with a null cursor', { workspaces: [], next_cursor: null, has_more: true }],
    ['the same cursor again', { workspaces: [], next_cursor: 'same', has_more: true }],
  ])('refuses to loop on %s', async (_name, page) => {
    const server = fakeFetch(() => json(200, page));
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const drain = async () => {
      for await (const _ of paginate(client, '/workspaces')) {
        // drain
      }
    };
    await expect(drain()).rejects.toMatchObject({ name: 'ApiError', code: 'invalid_response' });
    expect(server.seen.length).toBeLessThanOrEqual(2);
  });

  it('throws the ApiError of a failing page', async () => {
    const server = fakeFetch((_r, _s, i) =>
      i === 0
        ? json(200, { workspaces: [{ id: 'w1' }], next_cursor: 'p2', has_more: true })
        : json(400, errorBody('invalid_argument', 'cursor does not match the filters')),
    );
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const w of paginate(client, '/workspaces')) seen.push(w);
    })().catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_argument' });
  });
});
