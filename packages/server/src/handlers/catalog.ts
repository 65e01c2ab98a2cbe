import type { Schema } from '@svc/contract';
import { listImageRows, listSizeRows } from '../computers/repositories/catalog.js';
import { pageRequest, toPage } from '../platform/paging.js';
import type { CatalogDeps } from './deps.js';
import type { Handler } from './types.js';

const withTime = <T extends { created_at: Date }>(
  row: T,
): Omit<T, 'created_at'> & { created_at: string } => ({
  ...row,
  created_at: row.created_at.toISOString(),
});

export const listSizes: Handler<'listSizes', CatalogDeps> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listSizes' });
  const rows = await listSizeRows(ctx.db, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { sizes: items.map(withTime), next_cursor, has_more } };
};

/**
 * The catalogue, each image saying whether this deployment's driver can run it now: an image it cannot
 * run is listed as unavailable, not left out (the Docker driver asks the Engine; see
 * `ComputerDriver.imageAvailable`).
 */
export const listImages: Handler<'listImages', CatalogDeps> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listImages' });
  const rows = await listImageRows(ctx.db, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  const { driver } = ctx.deps;
  const images = await Promise.all(
    // `display` after `available`: what a table has room for shows whether an image runs first.
    items.map(async ({ display, ...row }) => ({
      ...withTime(row),
      driver: driver.name as Schema<'Image'>['driver'],
      available: (await driver.imageAvailable?.(row.name)) ?? false,
      display,
    })),
  );
  return { status: 200, body: { images, next_cursor, has_more } };
};

export const catalogHandlers = { listSizes, listImages };
