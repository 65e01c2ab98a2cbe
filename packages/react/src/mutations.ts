// The mutation hooks' shared part: TanStack's useMutation with an Idempotency-Key per call and the
// refresh of what the call changed, and the types of the long-running calls' options.
import type { ApiPaths, Operation, SvcClient, WaitOptions } from '@svc/client';
import {
  type UseMutationOptions,
  type UseMutationResult,
  useQueryClient,
  useMutation as useTanstackMutation,
} from '@tanstack/react-query';
import { useCallback } from 'react';
import { withIdempotencyKey } from './idempotency.js';
import { changedBy, type Resource, resourceFilter } from './keys.js';
import type { DataOf, ErrorOf, InitOf, MutationMethod, PathsOf } from './types.js';

/**
 * Follows operations until each has ended, reporting every change: `waitForOperations` of `@svc/client`
 * has this shape.
 */
export type OperationWaiter = (
  client: SvcClient,
  operations: readonly Operation[],
  options: WaitOptions,
) => Promise<Operation[]>;

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
export interface MutationSetup {
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
export function useSvcMutation<Data, Failure, Init>(
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
