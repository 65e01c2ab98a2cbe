import {
  type ApiPaths,
  type ListItem,
  type ListPath,
  type Operation,
  type SvcClient,
  unwrap,
  type WaitOptions,
  waitForOperations,
} from '@svc/client';
import {
  type DataTag,
  type InfiniteData,
  infiniteQueryOptions as tanstackInfiniteQueryOptions,
  queryOptions as tanstackQueryOptions,
  type UseInfiniteQueryOptions,
  type UseMutationOptions,
  type UseMutationResult,
  type UseQueryOptions,
  useQueryClient,
  useInfiniteQuery as useTanstackInfiniteQuery,
  useMutation as useTanstackMutation,
  useQuery as useTanstackQuery,
  useSuspenseQuery as useTanstackSuspenseQuery,
} from '@tanstack/react-query';
import { useCallback } from 'react';
import { retryDelay, shouldRetry, withIdempotencyKey } from './idempotency.js';
import { changedBy, queryKey, type Resource, resourceFilter, type SvcQueryKey } from './keys.js';
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

/**
 * Follows operations until each has ended, reporting every change: `waitForOperations` of `@svc/client`
 * has this shape.
 */
export type OperationWaiter = (
  client: SvcClient,
  operations: readonly Operation[],
  options: WaitOptions,
) => Promise<Operation[]>;

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

/** What a mutation hook takes besides TanStack's own options. */
export interface MutationExtras<Data, Init> {
  /**
   * What to refresh when the call has settled: resources (see `resourceFilter`), or `false` for
   * nothing. Default: what `changedBy` says of the path and its path parameters.
   */
  invalidates?: false | ((init: Init, data: Data | undefined) => Resource[]);
}

export type MutationOptionsOf<
  Method extends MutationMethod,
  Path extends PathsOf<Method, Paths>,
  Paths extends {},
> = Omit<
  UseMutationOptions<DataOf<Method, Path, Paths>, ErrorOf<Method, Path, Paths>, InitOf<Method, Path, Paths>>,
  'mutationKey' | 'mutationFn'
> &
  MutationExtras<DataOf<Method, Path, Paths>, InitOf<Method, Path, Paths>>;

/** The paths of `Method` that answer `202 {operations: […]}`: long-running calls. */
export type OperationPathsOf<Method extends MutationMethod, Paths extends {} = ApiPaths> = {
  [Path in PathsOf<Method, Paths>]: DataOf<Method, Path, Paths> extends { operations: readonly Operation[] }
    ? Path
    : never;
}[PathsOf<Method, Paths>];

/** Options of a long-running mutation: a mutation's, plus how to wait for its operations. */
export type OperationMutationOptionsOf<
  Method extends MutationMethod,
  Path extends OperationPathsOf<Method, Paths>,
  Paths extends {},
> = MutationOptionsOf<Method, Path, Paths> & {
  /**
   * Wait until every operation of the 202 has ended (`waitForOperations` of `@svc/client`, long-polling
   * `GET /operations/{operation}?wait=N`) before the mutation succeeds. `false`: succeed at the 202.
   * Default `true`.
   */
  wait?: boolean | Omit<WaitOptions, 'signal' | 'onProgress'>;
  /** Called with an operation every time a poll shows it changed; its target's queries are refreshed too. */
  onProgress?: (operation: Operation) => void;
};

/** What every mutation hook of one {@link createHooks} shares. */
interface MutationSetup {
  makeKey: () => string;
  retry: {
    retry: (failureCount: number, error: unknown) => boolean;
    retryDelay: (failureCount: number, error: unknown) => number;
  };
}

/**
 * TanStack's `useMutation` for `method path` calling `fn`: the key is made in `mutate`, once per call,
 * so TanStack's retries of the call send the same one; what the call changed is refreshed when it settles.
 */
function useSvcMutation<Data, Failure, Init>(
  setup: MutationSetup,
  method: string,
  path: string,
  fn: (init: Init) => Promise<Data>,
  extra: Omit<UseMutationOptions<Data, Failure, Init>, 'mutationKey' | 'mutationFn'> &
    MutationExtras<Data, Init> = {},
): UseMutationResult<Data, Failure, Init> {
  const queryClient = useQueryClient();
  const { invalidates, onSettled, ...rest } = extra;
  const result = useTanstackMutation<Data, Failure, Init>({
    mutationKey: [method, path],
    mutationFn: fn,
    ...setup.retry,
    ...rest,
    onSettled: async (data, error, init, ...more) => {
      const resources =
        invalidates === false
          ? []
          : invalidates
            ? invalidates(init, data)
            : changedBy(path, (init as { params?: { path?: Record<string, unknown> } })?.params?.path);
      await Promise.all(resources.map((r) => queryClient.invalidateQueries(resourceFilter(r))));
      return onSettled?.(data, error, init, ...more);
    },
  });
  const { mutate: rawMutate, mutateAsync: rawMutateAsync } = result;
  const mutate = useCallback(
    (...[init, opts]: Parameters<typeof rawMutate>) =>
      rawMutate(
        ...([withIdempotencyKey(init, setup.makeKey), opts] as unknown as Parameters<typeof rawMutate>),
      ),
    [rawMutate, setup],
  ) as typeof rawMutate;
  const mutateAsync = useCallback(
    (...[init, opts]: Parameters<typeof rawMutateAsync>) =>
      rawMutateAsync(
        ...([withIdempotencyKey(init, setup.makeKey), opts] as unknown as Parameters<typeof rawMutateAsync>),
      ),
    [rawMutateAsync, setup],
  ) as typeof rawMutateAsync;
  return { ...result, mutate, mutateAsync } as typeof result;
}

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

/**
 * Every item an infinite list has loaded, page after page: the one array of each page's envelope
 * (`computers`, `workspaces`, …).
 *
 * @example
 * import { itemsOf } from '@svc/react';
 * const names = itemsOf<{ name: string }>({ pages: [{ computers: [{ name: 'a' }], next_cursor: null, has_more: false }], pageParams: [null] }).map((c) => c.name);
 */
export function itemsOf<Item = unknown>(data: { pages: readonly object[] } | undefined): Item[] {
  return (data?.pages ?? []).flatMap(
    (page) =>
      (Object.entries(page).find(([key, value]) => key !== 'next_cursor' && Array.isArray(value))?.[1] ??
        []) as Item[],
  );
}

/**
 * The item type of a list path, for {@link itemsOf}.
 *
 * @example
 * import type { ItemOf } from '@svc/react';
 * type Computer = ItemOf<'/workspaces/{workspace}/computers'>;
 */
export type ItemOf<Path extends ListPath<Paths>, Paths extends {} = ApiPaths> = ListItem<Path, Paths>;

/** The hooks {@link createHooks} makes. */
export type SvcHooks<Paths extends {} = ApiPaths> = ReturnType<typeof createHooks<Paths>>;
