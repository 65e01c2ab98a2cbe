import type { ApiPaths, ListItem, ListPath } from '@svc/client';

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
