import type { SvcClient } from './client.js';
import type { ApiPaths } from './contract.js';
import { ApiError } from './errors.js';
import { unwrap } from './unwrap.js';

type JsonOk<Op> = Op extends { responses: { 200: { content: { 'application/json': infer Body } } } }
  ? Body
  : never;
type ListBody<Op> = JsonOk<Op> extends { has_more: boolean; next_cursor: unknown } ? JsonOk<Op> : never;
type GetOf<Paths, Path extends keyof Paths> = Paths[Path] extends { get: infer Op } ? Op : never;

/**
 * The paths whose GET answers the list envelope (`{<plural>: [...], next_cursor, has_more}`).
 *
 * @example
 * import type { ListPath } from '@svc/client';
 * const path: ListPath = '/workspaces';
 */
export type ListPath<Paths = ApiPaths> = {
  [Path in keyof Paths]: [ListBody<GetOf<Paths, Path>>] extends [never] ? never : Path;
}[keyof Paths];

/**
 * The item type of a list path: the element of its one array-valued key.
 *
 * @example
 * import type { ListItem } from '@svc/client';
 * type Computer = ListItem<'/workspaces/{workspace}/computers'>;
 */
export type ListItem<Path extends keyof Paths, Paths = ApiPaths> = ListBody<GetOf<Paths, Path>>[Exclude<
  keyof ListBody<GetOf<Paths, Path>>,
  'next_cursor' | 'has_more'
>] extends readonly (infer Item)[] | undefined
  ? Item
  : never;

type ListParams<Op> = Op extends { parameters: infer Params extends { query?: unknown } }
  ? Omit<Params, 'query' | 'cookie'> & { query?: Omit<NonNullable<Params['query']>, 'cursor'> }
  : never;

/**
 * What {@link paginate} sends with every page: the path and query parameters (the cursor is the
 * iterator's business), plus headers and an AbortSignal.
 *
 * @example
 * import type { ListInit } from '@svc/client';
 * const init: ListInit<'/workspaces/{workspace}/computers'> = { params: { path: { workspace: 'dev' }, query: { limit: 200 } } };
 */
export interface ListInit<Path extends keyof Paths, Paths = ApiPaths> {
  params: ListParams<GetOf<Paths, Path>>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

type InitArg<Path extends keyof Paths, Paths> =
  // biome-ignore lint/complexity/noBannedTypes: `{} extends T` is how TS asks "are all keys of T optional?"
  {} extends ListParams<GetOf<Paths, Path>> ? [init?: ListInit<Path, Paths>] : [init: ListInit<Path, Paths>];

/**
 * Iterates over every item of a list operation, page by page, following `next_cursor` until `has_more`
 * is false (the only end signal, design §6). Pages are fetched lazily: stop iterating and no more
 * requests are made. Errors are thrown as {@link ApiError}; a server that says `has_more` without a new
 * cursor raises `ApiError` with code `invalid_response` instead of looping forever.
 *
 * @example
 * import { createClient, paginate } from '@svc/client';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * for await (const computer of paginate(client, '/workspaces/{workspace}/computers', { params: { path: { workspace: 'dev' } } })) {
 *   console.log(computer.name);
 * }
 */
export async function* paginate<Paths extends {} = ApiPaths, Path extends ListPath<Paths> = ListPath<Paths>>(
  client: SvcClient<Paths>,
  path: Path,
  ...[init]: InitArg<Path, Paths>
): AsyncGenerator<ListItem<Path, Paths>, void, undefined> {
  const params = (init?.params ?? {}) as { query?: Record<string, unknown> };
  // openapi-fetch's per-path typing cannot follow a generic Path; the public signature carries the types.
  const get = client.GET as unknown as (path: string, init: unknown) => Promise<{ response: Response }>;
  let cursor: string | undefined;
  for (;;) {
    const query = cursor === undefined ? params.query : { ...params.query, cursor };
    const page = (await unwrap(get(path as string, { ...init, params: { ...params, query } }))) as Record<
      string,
      unknown
    >;
    const items = Object.entries(page).find(
      ([key, value]) => key !== 'next_cursor' && Array.isArray(value),
    )?.[1];
    yield* (items ?? []) as ListItem<Path, Paths>[];
    if (page.has_more !== true) return;
    const next = page.next_cursor;
    if (typeof next !== 'string' || next === '' || next === cursor) {
      throw new ApiError(`GET ${String(path)} said has_more without a new next_cursor`, {
        status: 200,
        code: 'invalid_response',
        details: { next_cursor: next ?? null },
      });
    }
    cursor = next;
  }
}
