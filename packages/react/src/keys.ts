// Query keys, and the filters that find them by resource. A key is openapi-react-query's convention,
// `[method, path, init]` (an infinite list adds a fourth element, so it never shares an entry with the
// plain query of the same page: openapi-typescript#2184), so TanStack's partial matching works on it.
import type { Query, QueryFilters, QueryKey } from '@tanstack/react-query';

/** The key of a query: `[method, path template, init]`, plus `'infinite'` for an infinite list. */
export type SvcQueryKey = readonly [method: string, path: string, init: object, kind?: 'infinite'];

/**
 * The key of `method path` with `init` (an empty object when there is none, so every key has three parts).
 *
 * @example
 * import { queryKey } from '@svc/react';
 * queryKey('get', '/workspaces/{workspace}', { params: { path: { workspace: 'dev' } } });
 */
export function queryKey(method: string, path: string, init: object | undefined): SvcQueryKey {
  return [method, path, stripSignal(init ?? {})];
}

function stripSignal(init: object): object {
  if (!('signal' in init)) return init;
  const { signal: _signal, ...rest } = init as { signal?: unknown };
  return rest;
}

/** Path parameter values to match: one value, or any of several (an id and a name of the same thing). */
export type ParamMatch = Record<string, string | readonly string[]>;

/**
 * A resource: a path template, and optionally the values its path parameters must have. It stands for
 * the GET queries of that path and of every path under it (`/workspaces/{workspace}/computers` covers
 * the list and `…/computers/{computer}`).
 */
export interface Resource {
  path: string;
  params?: ParamMatch | undefined;
  /** Only `path` itself, not the paths under it. */
  exact?: boolean | undefined;
}

/**
 * The filter of every cached GET query of `resource` (its path, or a path under it) whose path
 * parameters have the given values; pass it to `queryClient.invalidateQueries`, `refetchQueries`,
 * `removeQueries` or `cancelQueries`.
 *
 * @example
 * import { resourceFilter } from '@svc/react';
 * import { QueryClient } from '@tanstack/react-query';
 * const queryClient = new QueryClient();
 * // every computer query of workspace "dev": its lists, infinite lists and single computers
 * await queryClient.invalidateQueries(resourceFilter({ path: '/workspaces/{workspace}/computers', params: { workspace: 'dev' } }));
 */
export function resourceFilter(resource: Resource): QueryFilters {
  return { predicate: (query: Query) => keyMatches(query.queryKey, resource) };
}

/**
 * Whether a query key belongs to `resource`.
 *
 * @example
 * import { keyMatches } from '@svc/react';
 * keyMatches(['get', '/workspaces/{workspace}', { params: { path: { workspace: 'dev' } } }], { path: '/workspaces' }); // true
 */
export function keyMatches(key: QueryKey, resource: Resource): boolean {
  const [method, path, init] = key as unknown as Partial<SvcQueryKey>;
  if (method !== 'get' || typeof path !== 'string') return false;
  if (path !== resource.path && (resource.exact || !path.startsWith(`${resource.path}/`))) return false;
  const values = (init as { params?: { path?: Record<string, unknown> } } | undefined)?.params?.path ?? {};
  return Object.entries(resource.params ?? {}).every(([name, want]) => {
    const value = values[name];
    return typeof want === 'string' ? value === want : want.includes(value as string);
  });
}

/**
 * What a mutation of `path` with these path parameters changes, by default: the thing its last path
 * parameter names, with everything under it (`…/computers/{computer}` and `…/{computer}/start` change
 * the computer; a create in `…/{workspace}/computers` changes the workspace's lists), and the list that
 * holds it (`…/computers`, that path only). A path without parameters changes itself.
 *
 * @example
 * import { changedBy } from '@svc/react';
 * changedBy('/workspaces/{workspace}/computers/{computer}/start', { workspace: 'dev', computer: 'box' });
 * // [{ path: '/workspaces/{workspace}/computers/{computer}', params: { workspace: 'dev', computer: 'box' } },
 * //  { path: '/workspaces/{workspace}/computers', params: { workspace: 'dev' }, exact: true }]
 */
export function changedBy(path: string, params: Record<string, unknown> = {}): Resource[] {
  const segments = path.split('/');
  const last = segments.findLastIndex((segment) => /^\{.+\}$/.test(segment));
  if (last < 0) return [{ path }];
  const names = segments
    .slice(0, last + 1)
    .flatMap((s) => (/^\{(.+)\}$/.exec(s)?.[1] ? [s.slice(1, -1)] : []));
  const pick = (keep: string[]): ParamMatch =>
    Object.fromEntries(
      keep.flatMap((name) => (typeof params[name] === 'string' ? [[name, params[name]]] : [])),
    );
  return [
    { path: segments.slice(0, last + 1).join('/'), params: pick(names) },
    { path: segments.slice(0, last).join('/') || '/', params: pick(names.slice(0, -1)), exact: true },
  ];
}
