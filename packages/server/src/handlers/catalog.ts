import { pageRequest, toPage } from '../paging.js';
import { listImageRows, listSizeRows } from '../repositories/catalog.js';
import type { Handler } from './types.js';

const withTime = <T extends { created_at: Date }>(
  row: T,
): Omit<T, 'created_at'> & { created_at: string } => ({
  ...row,
  created_at: row.created_at.toISOString(),
});

export const listSizes: Handler<'listSizes'> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listSizes' });
  const rows = await listSizeRows(ctx.db, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { sizes: items.map(withTime), next_cursor, has_more } };
};

export const listImages: Handler<'listImages'> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listImages' });
  const rows = await listImageRows(ctx.db, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { images: items.map(withTime), next_cursor, has_more } };
};

export const catalogHandlers = { listSizes, listImages };
