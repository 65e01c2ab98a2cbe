import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError } from './exit-codes.js';
import { writePrivateFile } from './private-file.js';
import { DEFAULT_PROFILE } from './profiles.js';

/** What `svc login` stores: the refresh token of the browser sign-in and the cached access token. */
export interface Session {
  base_url: string;
  refresh_token: string;
  access_token?: string;
  /** RFC 3339, when `access_token` expires. */
  expires_at?: string;
  updated_at: string;
}

/** The session's file name of a profile: `session.json` for `default` (as before profiles), else `session.<name>.json`. */
function fileOf(profile: string): string {
  return profile === DEFAULT_PROFILE ? 'session.json' : `session.${profile}.json`;
}

/**
 * The session file's path of a profile in a config directory.
 *
 * @example
 * sessionPath('/home/ada/.config/svc'); // '/home/ada/.config/svc/session.json'
 * sessionPath('/home/ada/.config/svc', 'work'); // '/home/ada/.config/svc/session.work.json'
 */
export function sessionPath(dir: string, profile: string = DEFAULT_PROFILE): string {
  return join(dir, fileOf(profile));
}

/**
 * Reads the stored session, or undefined when there is none.
 *
 * @example
 * const session = await readSession(configDir(process.env));
 */
export async function readSession(
  dir: string,
  profile: string = DEFAULT_PROFILE,
): Promise<Session | undefined> {
  let text: string;
  try {
    text = await readFile(sessionPath(dir, profile), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const value = JSON.parse(text) as Partial<Session>;
  if (typeof value.base_url !== 'string' || typeof value.refresh_token !== 'string') {
    throw new CliError(
      'authentication',
      'invalid_session',
      `The session file ${sessionPath(dir, profile)} is damaged: run \`svc login\` again.`,
    );
  }
  return value as Session;
}

/**
 * Stores the session of a profile with mode 0600 in a 0700 directory, atomically ({@link writePrivateFile}).
 *
 * @example
 * await writeSession(dir, { base_url, refresh_token, updated_at: new Date().toISOString() });
 */
export async function writeSession(
  dir: string,
  session: Session,
  profile: string = DEFAULT_PROFILE,
): Promise<void> {
  await writePrivateFile(dir, fileOf(profile), `${JSON.stringify(session, null, 2)}\n`);
}

/**
 * Forgets the session; true when there was one.
 *
 * @example
 * await deleteSession(dir);
 */
export async function deleteSession(dir: string, profile: string = DEFAULT_PROFILE): Promise<boolean> {
  try {
    await stat(sessionPath(dir, profile));
  } catch {
    return false;
  }
  await rm(sessionPath(dir, profile), { force: true });
  return true;
}

const STALE_LOCK_MS = 30_000;

/**
 * Runs `fn` holding `session.lock`, so two `svc` processes never refresh with the same refresh token
 * (the second would be a reuse, and the server would revoke the whole sign-in). A lock older than
 * 30 s is taken over (its holder crashed).
 *
 * @example
 * await withSessionLock(dir, async () => rotate());
 */
export async function withSessionLock<T>(
  dir: string,
  fn: () => Promise<T>,
  timeoutMs = 20_000,
  profile: string = DEFAULT_PROFILE,
): Promise<T> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const lock = join(dir, `${fileOf(profile).replace(/\.json$/, '')}.lock`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) await rm(lock, { force: true });
      else if (Date.now() > deadline)
        throw new CliError('error', 'session_locked', `Another svc process holds ${lock}; try again.`);
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}
