import type { Schema } from '@svc/contract';
import type { Queryable } from '../../platform/db/database.js';

/** A catalogue row: the spec's shape with `created_at` as the database returns it. */
export type CatalogRow<T> = Omit<T, 'created_at'> & { id: string; created_at: Date };

/** Whether the size and the image are in the catalogues. */
export async function catalogueHas(
  db: Queryable,
  size: string,
  image: string,
): Promise<{ size: boolean; image: boolean }> {
  const { rows } = await db.query<{ size: boolean; image: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM sizes WHERE name = $1) AS size, EXISTS (SELECT 1 FROM images WHERE name = $2) AS image`,
    [size, image],
  );
  return { size: rows[0]?.size === true, image: rows[0]?.image === true };
}

/** One page of sizes, newest first. */
export async function listSizeRows(
  db: Queryable,
  page: { after: string | null; limit: number },
): Promise<CatalogRow<Schema<'Size'>>[]> {
  const { rows } = await db.query<CatalogRow<Schema<'Size'>>>(
    `SELECT id, name, vcpus, memory_mib, disk_gib, description, created_at FROM sizes
      WHERE ($1::text IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`,
    [page.after, page.limit],
  );
  return rows;
}

/** An image as the catalogue table has it: without what the driver says of it (`driver`, `available`). */
export type ImageRow = CatalogRow<Omit<Schema<'Image'>, 'driver' | 'available'>>;

/** One page of images, newest first. */
export async function listImageRows(
  db: Queryable,
  page: { after: string | null; limit: number },
): Promise<ImageRow[]> {
  const { rows } = await db.query<ImageRow>(
    `SELECT id, name, display_name, os, version, display, created_at FROM images
      WHERE ($1::text IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`,
    [page.after, page.limit],
  );
  return rows;
}

/** A size of the catalogue, as the Docker driver turns it into limits. */
export interface CatalogSize {
  vcpus: number;
  memory_mib: number;
}

/**
 * The CPUs and memory of the size `name`, or `undefined` when the catalogue has no such size.
 *
 * @example
 * const size = await catalogSize(db, 'medium'); // { vcpus: 2, memory_mib: 4096 }
 */
export async function catalogSize(db: Queryable, name: string): Promise<CatalogSize | undefined> {
  const { rows } = await db.query<CatalogSize>('SELECT vcpus, memory_mib FROM sizes WHERE name = $1', [name]);
  return rows[0];
}

/**
 * The container image reference of the image `name` (`null`: it has none; migration 005), or
 * `undefined` when the catalogue has no such image.
 *
 * @example
 * const image = await imageReference(db, 'busybox'); // { reference: 'svc/busybox:1' }
 */
export async function imageReference(
  db: Queryable,
  name: string,
): Promise<{ reference: string | null } | undefined> {
  const { rows } = await db.query<{ reference: string | null }>(
    'SELECT reference FROM images WHERE name = $1',
    [name],
  );
  return rows[0];
}
