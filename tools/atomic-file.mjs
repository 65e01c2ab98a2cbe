// Writes a file that another process may be reading (a bundle Prism or a test reads, the docs page a
// browser loads): the bytes go to a temporary name in the same directory, which is then renamed over the
// target. A rename within one file system is atomic (rename(2)), so a reader opens the old file or the
// new one, never half of one; a JSON.parse of a bundle caught mid-write failed with "Unterminated string".
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';

let written = 0;

/**
 * A temporary name beside `target`, unique to this process and call, hidden (a leading dot) and keeping
 * the extension (tools such as `redocly bundle -o` choose the format by it).
 *
 * @param {string} target
 * @returns {string}
 * @example
 * temporaryName('dist/openapi.json'); // → 'dist/.openapi.4242-1.tmp.json'
 */
export function temporaryName(target) {
  written += 1;
  const ext = extname(target);
  return join(dirname(target), `.${basename(target, ext)}.${process.pid}-${written}.tmp${ext}`);
}

/**
 * Writes `data` to `target` through a temporary file in the same directory, renamed into place. The
 * temporary file is removed when the write or the rename fails.
 *
 * @param {string} target
 * @param {string | Uint8Array} data
 * @returns {Promise<void>}
 * @example
 * await writeFileAtomic('dist/openapi.json', JSON.stringify(bundle, null, 2));
 */
export async function writeFileAtomic(target, data) {
  await mkdir(dirname(target), { recursive: true });
  const temporary = temporaryName(target);
  try {
    await writeFile(temporary, data);
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * {@link writeFileAtomic}, synchronously (for scripts that do nothing else meanwhile).
 *
 * @param {string} target
 * @param {string | Uint8Array} data
 * @example
 * writeFileAtomicSync('dist/openapi.docs.json', `${JSON.stringify(page, null, 2)}\n`);
 */
export function writeFileAtomicSync(target, data) {
  mkdirSync(dirname(target), { recursive: true });
  const temporary = temporaryName(target);
  try {
    writeFileSync(temporary, data);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * Moves a finished file that a child process wrote at {@link temporaryName}(target) into place.
 *
 * @param {string} temporary
 * @param {string} target
 * @example
 * const staged = temporaryName(out);
 * runRedocly(['build-docs', doc, '-o', staged], { cwd });
 * moveIntoPlace(staged, out);
 */
export function moveIntoPlace(temporary, target) {
  try {
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
