import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A file or directory holding secrets that other local users can read or write. */
export class InsecureFileError extends Error {
  override name = 'InsecureFileError';
}

/** Owner-only: what every file and directory that holds a secret gets, whatever the umask. */
const OTHERS = 0o077;

/**
 * Makes the PGlite data directory private before the database opens it: refuses one that group or
 * others can read or write (the embedded database holds every tenant's data and the sealed keys),
 * creates a missing one 0700, tightens anything inside to owner-only (files of older versions), and
 * sets the process umask to 077, because PGlite keeps creating files (WAL, relations) for as long as
 * it runs and asks for 0666/0755.
 *
 * @example
 * secureDataDir('/var/lib/svc/data'); // throws InsecureFileError when the directory is 0755
 */
export function secureDataDir(dir: string): void {
  process.umask(OTHERS);
  let mode: number | undefined;
  try {
    mode = statSync(dir).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (mode === undefined) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    return;
  }
  if (mode & OTHERS)
    throw new InsecureFileError(
      `the data directory ${dir} has mode ${mode.toString(8).padStart(4, '0')}: other users can read or write ` +
        `the database in it. Run \`chmod -R go-rwx ${dir}\` and start again.`,
    );
  tightenDataDir(dir);
}

/**
 * Clears group and other bits of everything under `dir` (symbolic links are left alone). PGlite
 * unpacks its initial cluster with explicit modes (0666/0755) that the umask does not reach, so
 * `openPglite` calls this again once the database is open, and on close.
 *
 * @example
 * tightenDataDir('/var/lib/svc/data');
 */
export function tightenDataDir(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) continue;
    if (stat.mode & OTHERS) chmodSync(path, stat.mode & 0o700);
    if (stat.isDirectory()) tightenDataDir(path);
  }
}
