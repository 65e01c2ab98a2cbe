import type { Queryable } from '../../db/database.js';

/** A size of the catalogue, as the Docker driver turns it into limits. */
export interface CatalogSize {
  vcpus: number;
  memory_mib: number;
}

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
    async size(name) {
      const { rows } = await db.query<CatalogSize>('SELECT vcpus, memory_mib FROM sizes WHERE name = $1', [
        name,
      ]);
      return rows[0];
    },
    async image(name) {
      const { rows } = await db.query<{ reference: string | null }>(
        'SELECT reference FROM images WHERE name = $1',
        [name],
      );
      return rows[0];
    },
  };
}
