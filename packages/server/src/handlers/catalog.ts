import type { Schema } from '@svc/contract';
import { pageRequest, toPage } from '../paging.js';
import type { Handler } from './types.js';

interface Timed {
  id: string;
  created_at: Date;
}

const withTime = <T extends Timed>(row: T): Omit<T, 'created_at'> & { created_at: string } => ({
  ...row,
  created_at: row.created_at.toISOString(),
});

export const listSizes: Handler<'listSizes'> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listSizes' });
  const { rows } = await ctx.db.query<Omit<Schema<'Size'>, 'created_at'> & Timed>(
    `SELECT id, name, vcpus, memory_mib, disk_gib, description, created_at FROM sizes
      WHERE ($1::text IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`,
    [page.after, page.limit + 1],
  );
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { sizes: items.map(withTime), next_cursor, has_more } };
};

export const listImages: Handler<'listImages'> = async (ctx) => {
  const page = pageRequest(ctx.deps.cursors, ctx.query, { op: 'listImages' });
  const { rows } = await ctx.db.query<Omit<Schema<'Image'>, 'created_at'> & Timed>(
    `SELECT id, name, display_name, os, version, created_at FROM images
      WHERE ($1::text IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`,
    [page.after, page.limit + 1],
  );
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return { status: 200, body: { images: items.map(withTime), next_cursor, has_more } };
};

export const catalogHandlers = { listSizes, listImages };
