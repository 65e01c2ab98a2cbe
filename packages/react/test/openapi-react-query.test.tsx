// @vitest-environment happy-dom
// Why @svc/react is its own thin layer on TanStack Query rather than openapi-react-query over our client
// (docs/decisions/0010-react-hooks.md): the same calls, measured side by side. Each case fails if
// openapi-react-query stops differing, so the decision is checked again on every upgrade.
import { ApiError } from '@svc/client';
import { renderHook, waitFor } from '@testing-library/react';
import createQueryClient from 'openapi-react-query';
import { describe, expect, it } from 'vitest';
import { errorBody, json, scripted, testQueryClient, wrapperFor } from './support.js';

const path = { params: { path: { workspace: 'dev', computer: 'box' } } };

describe('openapi-react-query 0.5 over @svc/client, against @svc/react', () => {
  it('types an open enum as an object (Readable<>, openapi-typescript#2765); ours keeps it a string', () => {
    const { api, client } = scripted(() => json(200, {}));
    const orq = createQueryClient(
      client as never as Parameters<typeof createQueryClient<import('@svc/contract').paths>>[0],
    );
    // Type-level only: never rendered.
    const typesOnly = () => {
      const theirs = orq.useQuery('get', '/workspaces/{workspace}/computers/{computer}', path).data;
      // @ts-expect-error `state` is Readable<'running' | … | (string & {})>, an object of string methods
      const theirState: string | undefined = theirs?.computer.state;
      const ourState: string | undefined = api.useQuery('/workspaces/{workspace}/computers/{computer}', path)
        .data?.computer.state;
      return [theirState, ourState];
    };
    expect(typeof typesOnly).toBe('function');
  });

  it('fails with the bare error body, without the status; ours with an ApiError of that status', async () => {
    const { api, client } = scripted(() => json(404, errorBody('not_found')));
    const orq = createQueryClient(
      client as never as Parameters<typeof createQueryClient<import('@svc/contract').paths>>[0],
    );
    const theirs = renderHook(
      () => ({
        ...orq.useQuery('get', '/workspaces/{workspace}/computers/{computer}', path, { retry: false }),
      }),
      {
        wrapper: wrapperFor(testQueryClient()),
      },
    );
    const ours = renderHook(
      () => ({ ...api.useQuery('/workspaces/{workspace}/computers/{computer}', path) }),
      {
        wrapper: wrapperFor(testQueryClient()),
      },
    );
    await waitFor(() => expect(theirs.result.current.isError && ours.result.current.isError).toBe(true));
    expect(theirs.result.current.error).toEqual(errorBody('not_found'));
    expect(theirs.result.current.error).not.toHaveProperty('status');
    expect(ours.result.current.error).toBeInstanceOf(ApiError);
    expect(ours.result.current.error).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('asks for the first page of an infinite list with cursor=0 unless told otherwise; ours sends none', async () => {
    const page = { computers: [], next_cursor: null, has_more: false };
    const { api, client, seen } = scripted(() => json(200, page));
    const orq = createQueryClient(
      client as never as Parameters<typeof createQueryClient<import('@svc/contract').paths>>[0],
    );
    const init = { params: { path: { workspace: 'dev' } } };
    const theirs = renderHook(
      () => ({
        ...orq.useInfiniteQuery('get', '/workspaces/{workspace}/computers', init, {
          getNextPageParam: () => undefined,
          initialPageParam: undefined,
        }),
      }),
      { wrapper: wrapperFor(testQueryClient()) },
    );
    await waitFor(() => expect(theirs.result.current.isFetched).toBe(true));
    const ours = renderHook(() => ({ ...api.useInfiniteQuery('/workspaces/{workspace}/computers', init) }), {
      wrapper: wrapperFor(testQueryClient()),
    });
    await waitFor(() => expect(ours.result.current.isSuccess).toBe(true));
    expect(seen.map((s) => s.query.toString())).toEqual(['cursor=0', '']);
  });
});
