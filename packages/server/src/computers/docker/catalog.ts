import type { Queryable } from '../../platform/db/database.js';
import { type CatalogSize, catalogSize, imageReference } from '../repositories/catalog.js';

/** Where the Docker driver looks up a computer's size and image (the `sizes` and `images` tables). */
export interface DockerCatalog {
  size(name: string): Promise<CatalogSize | undefined>;
  /** The container image reference of a catalogue image; `null` when it has none. */
  image(name: string): Promise<{ reference: string | null } | undefined>;
}

/**
 * The catalogue in the database: sizes from `sizes`, image references from `images.reference`
 * (migration 005). Read on every action, so a migration that repoints an image applies at once.
 *
 * @example
 * const driver = new DockerDriver({ docker, catalog: databaseCatalog(db), instance: 'default' });
 */
export function databaseCatalog(db: Queryable): DockerCatalog {
  return {
    size: (name) => catalogSize(db, name),
    image: (name) => imageReference(db, name),
  };
}
