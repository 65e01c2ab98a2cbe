import {
  type ApiPaths,
  type ListPath,
  type Operation,
  type SvcClient,
  unwrap,
  waitForOperations,
} from '@svc/client';
import {
  type DataTag,
  type InfiniteData,
  infiniteQueryOptions as tanstackInfiniteQueryOptions,
  queryOptions as tanstackQueryOptions,
  type UseInfiniteQueryOptions,
  type UseQueryOptions,
  useQueryClient,
  useInfiniteQuery as useTanstackInfiniteQuery,
  useQuery as useTanstackQuery,
  useSuspenseQuery as useTanstackSuspenseQuery,
} from '@tanstack/react-query';
import { retryDelay, shouldRetry } from './idempotency.js';
import { queryKey, type SvcQueryKey } from './keys.js';
import {
  type MutationOptionsOf,
  type MutationSetup,
  type OperationMutationOptionsOf,
  type OperationPathsOf,
  type OperationWaiter,
  useSvcMutation,
} from './mutations.js';
import { mentionsAny, operationChanges } from './operations.js';
import type { DataOf, ErrorOf, InitOf, MutationMethod, PathsOf } from './types.js';

/** Options of {@link createHooks}. */
export interface HooksOptions {
  /** Makes each mutation call's `Idempotency-Key`. Default `crypto.randomUUID`. */
  idempotencyKey?: () => string;
  /**
   * Whether a failed query or mutation is tried again: TanStack's `retry`. Default {@link shouldRetry}
   * (network errors, 429, 503, 409 `idempotency_key_in_use`; 4 attempts). A hook's own option wins.
   */
  retry?: (failureCount: number, error: unknown) => boolean;
  /** TanStack's `retryDelay`. Default {@link retryDelay}: `Retry-After`, else exponential with jitter. */
  retryDelay?: (failureCount: number, error: unknown) => number;
  /**
   * How `useOperationMutation` follows a 202's operations to their end. Default `waitForOperations` of
   * `@svc/client` (long-polls `GET /operations/{operation}?wait=N`). This is the seam for event streams:
   * the spec has none yet; when it gains one, a waiter that listens to it goes here and no hook changes.
   */
  waitForOperations?: OperationWaiter;
}

/** The arguments after the path: `init` is required exactly when the operation has a required parameter. */
type Args<Init, Options> = undefined extends Init
  ? [init?: Init, options?: Options]
  : [init: Init, options?: Options];

type QueryOptionsOf<Path extends PathsOf<'get', Paths>, Paths extends {}> = Omit<
  UseQueryOptions<
    DataOf<'get', Path, Paths>,
    ErrorOf<'get', Path, Paths>,
    DataOf<'get', Path, Paths>,
    SvcQueryKey
  >,
  'queryKey' | 'queryFn'
>;

type ListPathOf<Paths extends {}> = ListPath<Paths> & PathsOf<'get', Paths>;

type InfiniteOptionsOf<Path extends ListPathOf<Paths>, Paths extends {}> = Omit<
  UseInfiniteQueryOptions<
    DataOf<'get', Path, Paths>,
    ErrorOf<'get', Path, Paths>,
    InfiniteData<DataOf<'get', Path, Paths>, string | null>,
    SvcQueryKey,
    string | null
  >,
  'queryKey' | 'queryFn' | 'initialPageParam' | 'getNextPageParam'
>;

/**
 * TanStack Query hooks for every operation of the API over one `@svc/client` client: a query per GET
 * (`useQuery`, `useSuspenseQuery`, `queryOptions`), an infinite list per list operation
 * (`useInfiniteQuery`), a mutation per POST/PUT/PATCH/DELETE (`useMutation`) and, for the calls that
 * answer 202 with `operations[]`, a mutation that waits for them (`useOperationMutation`). Paths,
 * parameters, bodies, results and errors are typed by the generated `paths`.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { createHooks } from '@svc/react';
 * const api = createHooks(createClient({ baseUrl: 'http://127.0.0.1:4010', token: 'anything' }));
 * function Computers({ workspace }: { workspace: string }) {
 *   const { data } = api.useQuery('/workspaces/{workspace}/computers', { params: { path: { workspace } } });
 *   return data?.computers.map((c) => c.name).join(', ');
 * }
 */
export function createHooks<Paths extends {} = ApiPaths>(
  client: SvcClient<Paths>,
  options: HooksOptions = {},
) {
  const makeKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  const retry = { retry: options.retry ?? shouldRetry, retryDelay: options.retryDelay ?? retryDelay };
  const setup: MutationSetup = { makeKey, retry };
  const follow: OperationWaiter = options.waitForOperations ?? waitForOperations;
  const send = client as unknown as Record<
    string,
    (path: string, init: unknown) => Promise<{ response: Response }>
  >;
  const call = (method: string, path: string, init: unknown): Promise<never> =>
    unwrap(send[method.toUpperCase()]!(path, init)) as Promise<never>;

  /**
   * The options of the query of `GET path` (key and function), for `useQuery`, `prefetchQuery`,
   * `ensureQueryData`, `getQueryData`, `setQueryData`… The key is `['get', path, init]`.
   */
  function queryOptions<Path extends PathsOf<'get', Paths>>(
    path: Path,
    ...[init, extra]: Args<InitOf<'get', Path, Paths>, QueryOptionsOf<Path, Paths>>
  ) {
    type Data = DataOf<'get', Path, Paths>;
    const options = {
      queryKey: queryKey('get', path as string, init ?? undefined),
      queryFn: ({ signal }: { signal: AbortSignal }) => call('get', path as string, { ...init, signal }),
      ...retry,
      ...extra,
    };
    // tanstack's queryOptions only brands the key with the data type (for getQueryData/setQueryData).
    return tanstackQueryOptions(
      options as unknown as Parameters<
        typeof tanstackQueryOptions<Data, ErrorOf<'get', Path, Paths>, Data, SvcQueryKey>
      >[0],
    ) as UseQueryOptions<Data, ErrorOf<'get', Path, Paths>, Data, SvcQueryKey> & {
      queryKey: DataTag<SvcQueryKey, Data, ErrorOf<'get', Path, Paths>>;
    };
  }

  /**
   * The options of an infinite list over `GET path`: pages follow `next_cursor` while `has_more`
   * (design §6); the key is the plain query's with `'infinite'` added.
   */
  function infiniteQueryOptions<Path extends ListPathOf<Paths>>(
    path: Path,
    ...[init, extra]: Args<InitOf<'get', Path, Paths>, InfiniteOptionsOf<Path, Paths>>
  ) {
    type Page = DataOf<'get', Path, Paths>;
    const given = (init ?? {}) as { params?: { query?: Record<string, unknown> } };
    const [method, template, key] = queryKey('get', path as string, init ?? undefined);
    return tanstackInfiniteQueryOptions({
      queryKey: [method, template, key, 'infinite'] as SvcQueryKey,
      queryFn: ({ pageParam, signal }: { pageParam: string | null; signal: AbortSignal }) => {
        const query = { ...given.params?.query, cursor: pageParam ?? undefined };
        return call('get', path as string, {
          ...given,
          params: { ...given.params, query },
          signal,
        }) as Promise<Page>;
      },
      initialPageParam: null,
      getNextPageParam: (page: Page) => {
        const { has_more, next_cursor } = page as { has_more?: boolean; next_cursor?: string | null };
        return has_more && next_cursor ? next_cursor : undefined;
      },
      ...retry,
      ...extra,
    } as unknown as UseInfiniteQueryOptions<
      Page,
      ErrorOf<'get', Path, Paths>,
      InfiniteData<Page, string | null>,
      SvcQueryKey,
      string | null
    > & { initialPageParam: string | null });
  }

  return {
    /** The client the hooks call. */
    client,
    queryOptions,
    infiniteQueryOptions,

    /** `useQuery` of `GET path`: data and error typed by the spec. */
    useQuery<Path extends PathsOf<'get', Paths>>(
      path: Path,
      ...args: Args<InitOf<'get', Path, Paths>, QueryOptionsOf<Path, Paths>>
    ) {
      return useTanstackQuery(queryOptions(path, ...args));
    },

    /** `useSuspenseQuery` of `GET path`. */
    useSuspenseQuery<Path extends PathsOf<'get', Paths>>(
      path: Path,
      ...args: Args<InitOf<'get', Path, Paths>, QueryOptionsOf<Path, Paths>>
    ) {
      return useTanstackSuspenseQuery(queryOptions(path, ...args) as never) as ReturnType<
        typeof useTanstackSuspenseQuery<DataOf<'get', Path, Paths>, ErrorOf<'get', Path, Paths>>
      >;
    },

    /** `useInfiniteQuery` over a list operation; `itemsOf(data)` gives every item loaded so far. */
    useInfiniteQuery<Path extends ListPathOf<Paths>>(
      path: Path,
      ...args: Args<InitOf<'get', Path, Paths>, InfiniteOptionsOf<Path, Paths>>
    ) {
      return useTanstackInfiniteQuery(infiniteQueryOptions(path, ...args));
    },

    /**
     * `useMutation` of `method path`: `mutate(init)` sends an `Idempotency-Key` made for that call and
     * kept across its retries (429, 503, network errors), and refreshes what the call changed.
     */
    useMutation<Method extends MutationMethod, Path extends PathsOf<Method, Paths>>(
      method: Method,
      path: Path,
      extra?: MutationOptionsOf<Method, Path, Paths>,
    ) {
      return useSvcMutation<
        DataOf<Method, Path, Paths>,
        ErrorOf<Method, Path, Paths>,
        InitOf<Method, Path, Paths>
      >(setup, method, path as string, (init) => call(method, path as string, init), extra);
    },

    /**
     * The mutation of a long-running call (202 with `operations[]`): it succeeds when every operation
     * has ended (`failed` is a result: check `data.operations[i].state`), with `data.operations` holding
     * their final records, and refreshes the queries of what they changed (their targets) and of the
     * path. `wait: false` succeeds at the 202 instead.
     */
    useOperationMutation<Method extends MutationMethod, Path extends OperationPathsOf<Method, Paths>>(
      method: Method,
      path: Path,
      extra: OperationMutationOptionsOf<Method, Path, Paths> = {},
    ) {
      const queryClient = useQueryClient();
      const { wait = true, onProgress, invalidates, ...rest } = extra;
      const refresh = (ids: string[]) =>
        queryClient.invalidateQueries({ predicate: (query) => mentionsAny(query.queryKey, ids) });
      return useSvcMutation<
        DataOf<Method, Path, Paths>,
        ErrorOf<Method, Path, Paths>,
        InitOf<Method, Path, Paths>
      >(
        setup,
        method,
        path as string,
        async (init) => {
          const accepted = (await call(method, path as string, init)) as DataOf<Method, Path, Paths> & {
            operations: Operation[];
          };
          const ids = operationChanges(accepted);
          void refresh(ids);
          if (wait === false) return accepted;
          const operations = await follow(client as unknown as SvcClient, accepted.operations, {
            ...(wait === true ? {} : wait),
            onProgress: (operation) => {
              void refresh([operation.target.id]);
              onProgress?.(operation);
            },
          });
          await refresh(ids);
          return { ...accepted, operations };
        },
        { ...rest, ...(invalidates === undefined ? {} : { invalidates }) } as MutationOptionsOf<
          Method,
          Path,
          Paths
        >,
      );
    },
  };
}

/** The hooks {@link createHooks} makes. */
export type SvcHooks<Paths extends {} = ApiPaths> = ReturnType<typeof createHooks<Paths>>;
