// @vitest-environment happy-dom
import { ApiError, NetworkError } from '@svc/client';
import { act, renderHook, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { createHooks, itemsOf, resourceFilter } from '../src/index.js';
import { errorBody, json, scripted, testQueryClient, wrapperFor } from './support.js';

const computer = (name: string, state = 'running') => ({
  id: `id-${name}`,
  workspace_id: 'w1',
  name,
  state,
  size: 'small',
  image: 'debian-13',
  labels: {},
  created_at: '2026-11-03T10:00:00Z',
  updated_at: '2026-11-03T10:00:00Z',
});

const operation = (state: string, progress: number) => ({
  id: 'op-1',
  workspace_id: 'w1',
  type: 'computer.create',
  state,
  target: { type: 'computer', id: 'id-box' },
  created_by: 'p1',
  progress,
  created_at: '2026-11-03T10:00:00Z',
  updated_at: '2026-11-03T10:00:00Z',
});

describe('useQuery', () => {
  it('GETs the path with its parameters, keyed [get, path, init], and types the data', async () => {
    const { api, seen } = scripted(() => json(200, { computer: computer('box') }));
    const queryClient = testQueryClient();
    const init = { params: { path: { workspace: 'dev', computer: 'box' } } };
    const { result } = renderHook(() => api.useQuery('/workspaces/{workspace}/computers/{computer}', init), {
      wrapper: wrapperFor(queryClient),
    });
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    const state: string | undefined = result.current.data?.computer.state; // an open enum stays a string
    expect(state).toBe('running');
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['GET /workspaces/dev/computers/box']);
    expect(api.queryOptions('/workspaces/{workspace}/computers/{computer}', init).queryKey).toEqual([
      'get',
      '/workspaces/{workspace}/computers/{computer}',
      init,
    ]);
    expect(
      queryClient.getQueryData(
        api.queryOptions('/workspaces/{workspace}/computers/{computer}', init).queryKey,
      )?.computer.name,
    ).toBe('box');
  });

  it('fails with an ApiError of the documented status, its body typed by that status', async () => {
    const { api, seen } = scripted(() => json(404, errorBody('not_found', 'no computer box')));
    const { result } = renderHook(
      () =>
        api.useQuery('/workspaces/{workspace}/computers/{computer}', {
          params: { path: { workspace: 'dev', computer: 'box' } },
        }),
      { wrapper: wrapperFor(testQueryClient()) },
    );
    await waitFor(() => expect(result.current.isError).toBe(true));
    const error = result.current.error!;
    expect(error).toBeInstanceOf(ApiError);
    if (error.status !== 404) throw new Error(`unexpected ${error.status}`);
    // Narrowed by status: the body is the spec's 404 body (the error envelope).
    expect(error.body.error.code).toBe('not_found');
    expect(error).toMatchObject({ code: 'not_found', message: 'no computer box', requestId: 'req_err' });
    expect(seen).toHaveLength(1); // a 404 is not retried
  });

  it('retries 503 and network errors, not 4xx', async () => {
    let calls = 0;
    const { api, seen } = scripted(() => {
      calls += 1;
      if (calls === 1) return json(503, errorBody('unavailable'), { 'Retry-After': '0' });
      if (calls === 2) throw new TypeError('fetch failed');
      return json(200, { workspaces: [], next_cursor: null, has_more: false });
    });
    const { result } = renderHook(() => api.useQuery('/workspaces'), {
      wrapper: wrapperFor(testQueryClient()),
    });
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    expect(seen).toHaveLength(3);
  });
});

describe('useMutation', () => {
  it('sends one Idempotency-Key per call, the same on every retry of it, and a new one for the next call', async () => {
    let calls = 0;
    const { api, seen } = scripted(() => {
      calls += 1;
      if (calls === 1) return json(503, errorBody('unavailable'), { 'Retry-After': '0' });
      if (calls === 2) throw new TypeError('connection reset');
      return json(201, { workspace: { id: `w${calls}`, name: 'acme', display_name: 'Acme' } });
    });
    const { result } = renderHook(() => api.useMutation('post', '/workspaces'), {
      wrapper: wrapperFor(testQueryClient()),
    });
    const first = await act(() =>
      result.current.mutateAsync({ body: { name: 'acme', display_name: 'Acme' } }),
    );
    expect(first.workspace.name).toBe('acme');
    await act(() => result.current.mutateAsync({ body: { name: 'acme-2' } }));
    expect(seen.map((s) => s.headers.get('Idempotency-Key'))).toEqual(['key-1', 'key-1', 'key-1', 'key-2']);
    expect(JSON.parse(seen[0]!.body)).toEqual({ name: 'acme', display_name: 'Acme' });
  });

  it('keeps a key the caller chose', async () => {
    const { api, seen } = scripted(() => json(201, { workspace: { id: 'w', name: 'a', display_name: 'A' } }));
    const { result } = renderHook(() => api.useMutation('post', '/workspaces'), {
      wrapper: wrapperFor(testQueryClient()),
    });
    await act(() =>
      result.current.mutateAsync({ params: { header: { 'Idempotency-Key': 'mine' } }, body: { name: 'a' } }),
    );
    expect(seen[0]!.headers.get('Idempotency-Key')).toBe('mine');
  });

  it('fails typed by status: a 409 carries the spec 409 body', async () => {
    const { api } = scripted(() =>
      json(409, errorBody('already_exists', 'a computer named box already exists in this workspace')),
    );
    const { result } = renderHook(() => api.useMutation('post', '/workspaces/{workspace}/computers'), {
      wrapper: wrapperFor(testQueryClient()),
    });
    await act(async () => {
      result.current.mutate({
        params: { path: { workspace: 'dev' } },
        body: { name: 'box', size: 'small', image: 'debian-13' },
      });
    });
    await waitFor(() => expect(result.current.isError).toBe(true));
    const error = result.current.error!;
    expect(error.status).toBe(409);
    if (error.status === 409) expect(error.body.error.code).toBe('already_exists');
  });

  it('a network failure is a NetworkError (status 0) after the retries', async () => {
    const { api, seen } = scripted(() => {
      throw new TypeError('offline');
    });
    const { result } = renderHook(() => api.useMutation('delete', '/workspaces/{workspace}'), {
      wrapper: wrapperFor(testQueryClient()),
    });
    await act(async () => {
      result.current.mutate({ params: { path: { workspace: 'dev' } } });
    });
    await waitFor(() => expect(result.current.isError).toBe(true));
    expect(result.current.error).toBeInstanceOf(NetworkError);
    expect(result.current.error?.status).toBe(0);
    expect(new Set(seen.map((s) => s.headers.get('Idempotency-Key')))).toEqual(new Set(['key-1']));
    expect(seen).toHaveLength(4);
  });

  it('refreshes what it changed: the computer and its list, not another workspace', async () => {
    const { api, seen } = scripted((s) =>
      s.method === 'PATCH'
        ? json(200, { computer: computer('box2') })
        : s.path.endsWith('/computers')
          ? json(200, { computers: [], next_cursor: null, has_more: false })
          : json(200, { computer: computer('box') }),
    );
    const queryClient = testQueryClient();
    const wrapper = wrapperFor(queryClient);
    const queries = renderHook(
      () => [
        api.useQuery('/workspaces/{workspace}/computers/{computer}', {
          params: { path: { workspace: 'dev', computer: 'box' } },
        }),
        api.useQuery('/workspaces/{workspace}/computers', { params: { path: { workspace: 'dev' } } }),
        api.useQuery('/workspaces/{workspace}/computers', { params: { path: { workspace: 'other' } } }),
      ],
      { wrapper },
    );
    await waitFor(() => expect(queries.result.current.every((q) => q.isSuccess)).toBe(true));
    const { result } = renderHook(
      () => api.useMutation('patch', '/workspaces/{workspace}/computers/{computer}'),
      { wrapper },
    );
    seen.length = 0;
    await act(() =>
      result.current.mutateAsync({
        params: { path: { workspace: 'dev', computer: 'box' } },
        body: { name: 'box2' },
      }),
    );
    expect(seen.map((s) => `${s.method} ${s.path}`).sort()).toEqual([
      'GET /workspaces/dev/computers',
      'GET /workspaces/dev/computers/box',
      'PATCH /workspaces/dev/computers/box',
    ]);
  });
});

describe('useInfiniteQuery', () => {
  it('follows next_cursor while has_more, the first page without a cursor', async () => {
    const pages: Record<string, unknown> = {
      '': { computers: [computer('a'), computer('b')], next_cursor: 'c1', has_more: true },
      c1: { computers: [computer('c')], next_cursor: 'c2', has_more: true },
      c2: { computers: [computer('d')], next_cursor: null, has_more: false },
    };
    const { api, seen } = scripted((s) => json(200, pages[s.query.get('cursor') ?? '']));
    const init = { params: { path: { workspace: 'dev' }, query: { limit: 2 } } };
    // Spread: TanStack re-renders only for the result properties a render read.
    const { result } = renderHook(
      () => ({ ...api.useInfiniteQuery('/workspaces/{workspace}/computers', init) }),
      {
        wrapper: wrapperFor(testQueryClient()),
      },
    );
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    await act(() => result.current.fetchNextPage());
    await act(() => result.current.fetchNextPage());
    await waitFor(() => expect(result.current.hasNextPage).toBe(false));
    expect(itemsOf<{ name: string }>(result.current.data).map((c) => c.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(seen.map((s) => s.query.toString())).toEqual([
      'limit=2',
      'limit=2&cursor=c1',
      'limit=2&cursor=c2',
    ]);
  });

  it('does not share a cache entry with the plain query of the same page (openapi-typescript#2184)', async () => {
    const { api } = scripted(() =>
      json(200, { computers: [computer('a')], next_cursor: null, has_more: false }),
    );
    const init = { params: { path: { workspace: 'dev' } } };
    const { result } = renderHook(
      () =>
        [
          api.useQuery('/workspaces/{workspace}/computers', init),
          api.useInfiniteQuery('/workspaces/{workspace}/computers', init),
        ] as const,
      { wrapper: wrapperFor(testQueryClient()) },
    );
    await waitFor(() => expect(result.current.every((q) => q.isSuccess)).toBe(true));
    expect(result.current[0].data?.computers).toHaveLength(1);
    expect(result.current[1].data?.pages).toHaveLength(1);
  });
});

describe('useOperationMutation', () => {
  it('waits for the 202 operations to end, reports progress, and refreshes their target', async () => {
    const polls = [operation('running', 50), operation('succeeded', 100)];
    let state = 'creating';
    const { api, seen } = scripted((s) => {
      if (s.method === 'POST')
        return json(
          202,
          { computer: computer('box', 'creating'), operations: [operation('pending', 0)] },
          { Location: '/v1/operations/op-1', 'Retry-After': '1' },
        );
      if (s.path === '/operations/op-1') {
        const op = polls.shift()!;
        if (op.state === 'succeeded') state = 'running';
        return json(200, { operation: op });
      }
      return json(200, { computer: computer('box', state) });
    });
    const queryClient = testQueryClient();
    const wrapper = wrapperFor(queryClient);
    const watched = renderHook(
      () => ({
        ...api.useQuery('/workspaces/{workspace}/computers/{computer}', {
          params: { path: { workspace: 'dev', computer: 'box' } },
        }),
      }),
      { wrapper },
    );
    await waitFor(() => expect(watched.result.current.isSuccess).toBe(true));
    const progress: string[] = [];
    const { result } = renderHook(
      () =>
        api.useOperationMutation('post', '/workspaces/{workspace}/computers', {
          wait: { minIntervalMs: 0 },
          onProgress: (op) => progress.push(`${op.state} ${op.progress}`),
        }),
      { wrapper },
    );
    const done = await act(() =>
      result.current.mutateAsync({
        params: { path: { workspace: 'dev' } },
        body: { name: 'box', size: 'small', image: 'debian-13' },
      }),
    );
    expect(done.operations.map((op) => op.state)).toEqual(['succeeded']);
    expect(progress).toEqual(['running 50', 'succeeded 100']);
    expect(seen.filter((s) => s.path === '/operations/op-1').map((s) => s.query.get('wait'))).toEqual([
      '10',
      '10',
    ]);
    await waitFor(() => expect(watched.result.current.data?.computer.state).toBe('running'));
  });
});

describe('resourceFilter', () => {
  it('finds the queries of a resource by path and path parameters', async () => {
    const { api } = scripted((s) =>
      json(
        200,
        s.path.endsWith('computers')
          ? { computers: [], next_cursor: null, has_more: false }
          : { computer: computer('x') },
      ),
    );
    const queryClient = testQueryClient();
    await queryClient.fetchQuery(
      api.queryOptions('/workspaces/{workspace}/computers', { params: { path: { workspace: 'dev' } } }),
    );
    await queryClient.fetchQuery(
      api.queryOptions('/workspaces/{workspace}/computers/{computer}', {
        params: { path: { workspace: 'dev', computer: 'x' } },
      }),
    );
    await queryClient.fetchQuery(
      api.queryOptions('/workspaces/{workspace}/computers', { params: { path: { workspace: 'prod' } } }),
    );
    const found = (path: string, params?: Record<string, string>) =>
      queryClient
        .getQueryCache()
        .findAll(resourceFilter({ path, params }))
        .map((q) => JSON.stringify(q.queryKey[2]));
    expect(found('/workspaces/{workspace}/computers', { workspace: 'dev' })).toHaveLength(2);
    expect(found('/workspaces/{workspace}/computers')).toHaveLength(3);
    expect(found('/workspaces/{workspace}/computers/{computer}', { computer: 'x' })).toHaveLength(1);
    expect(found('/workspaces/{workspace}/members')).toHaveLength(0);
  });
});

describe('the operation waiter seam', () => {
  it('follows operations with the waiter given (an event stream, once the spec has one)', async () => {
    const { client, seen } = scripted(() =>
      json(
        202,
        { operations: [operation('pending', 0)] },
        { Location: '/v1/operations/op-1', 'Retry-After': '1' },
      ),
    );
    const followed: string[] = [];
    const api = createHooks(client, {
      waitForOperations: async (_client, operations, { onProgress }) => {
        followed.push(...operations.map((op) => op.id));
        const done = operations.map((op) => ({ ...op, state: 'succeeded', progress: 100 }));
        for (const op of done) onProgress?.(op);
        return done;
      },
    });
    const { result } = renderHook(
      () => api.useOperationMutation('post', '/workspaces/{workspace}/computers/{computer}/stop'),
      {
        wrapper: wrapperFor(testQueryClient()),
      },
    );
    const done = await act(() =>
      result.current.mutateAsync({ params: { path: { workspace: 'dev', computer: 'box' } } }),
    );
    expect(followed).toEqual(['op-1']);
    expect(done.operations[0]?.state).toBe('succeeded');
    expect(seen.map((s) => s.path)).toEqual(['/workspaces/dev/computers/box/stop']); // no long-poll
  });
});
