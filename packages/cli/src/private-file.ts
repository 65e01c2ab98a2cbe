import { chmod, mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes one of `svc`'s own files (a session, the profiles) with mode 0600 in a 0700 directory,
 * atomically (a temporary file renamed over the old one), so a crash never leaves half a token and no
 * other user can read it.
 *
 * @example
 * await writePrivateFile(configDir, 'config.json', JSON.stringify(config));
 */
export async function writePrivateFile(dir: string, name: string, text: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700); // a directory made earlier by someone else's umask is narrowed too
  const temporary = join(dir, `.${name}.${process.pid}.${Date.now()}`);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(temporary, 0o600); // the umask cannot widen it, but be explicit
  await rename(temporary, join(dir, name));
}
