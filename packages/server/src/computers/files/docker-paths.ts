import type { IncomingMessage } from 'node:http';
import type Docker from 'dockerode';
import tar from 'tar-stream';
import type { EngineStat } from './docker-engine.js';
import { engineStat, typeOfMode } from './docker-engine.js';
import { FileError } from './driver.js';
import { baseName, joinPath, normalizeComputerPath, parentOf } from './paths.js';
import {
  assertExists,
  assertLinkHops,
  assertParentDirectory,
  assertParentsMade,
  assertWriteAncestor,
} from './preconditions.js';

/** The owner when the container's user is not found (the driver's non-root fallback). */
const FALLBACK_OWNER = { uid: 65534, gid: 65534 };

/** Stats of paths in one container, each asked of the Engine once (see {@link statsOf}). */
export type StatLookup = (path: string) => Promise<EngineStat | undefined>;

/**
 * A lookup of stats (`HEAD …/archive`) that asks the Engine once per path, and `prefetch` that asks
 * for every segment of a path at once: a resolution then waits for one round trip, not one per
 * segment. A prefetched stat is only ever used for the very path it was asked for (when a segment
 * turns out to be a symlink, the resolution asks for other paths), so the answers are those of the
 * walk one segment at a time.
 *
 * @example
 * const stats = statsOf(container, signal);
 * stats.prefetch('/home/svc/a/b.txt'); // HEAD /, /home, /home/svc, /home/svc/a, /home/svc/a/b.txt at once
 * await resolveInContainer(container, '/home/svc/a/b.txt', signal, stats.lookup);
 */
export function statsOf(
  container: Docker.Container,
  signal: AbortSignal,
): { lookup: StatLookup; prefetch(path: string): void } {
  const asked = new Map<string, Promise<EngineStat | undefined>>();
  const lookup: StatLookup = (path) => {
    let answer = asked.get(path);
    if (!answer) {
      answer = engineStat(container, path, signal);
      answer.catch(() => {}); // a prefetched answer nobody awaits must not be an unhandled rejection
      asked.set(path, answer);
    }
    return answer;
  };
  const prefetch = (path: string) => {
    for (let at = path; ; at = parentOf(at)) {
      void lookup(at);
      if (at === '/') return;
    }
  };
  return { lookup, prefetch };
}

/**
 * The path with every symlink resolved inside the container, and its stat: one `HEAD` per segment,
 * each on an already resolved parent, so the Engine's answer for a symlink is about that link alone
 * (the HEADs are made at once: see {@link statsOf}). At most 40 symlinks are followed (as Linux's
 * ELOOP bound), then `not_found`.
 *
 * @example
 * const { path } = await resolveInContainer(container, '/home/svc/slash/etc', signal); // '/etc'
 */
export async function resolveInContainer(
  container: Docker.Container,
  path: string,
  signal: AbortSignal,
  stats?: StatLookup,
): Promise<{ path: string; stat: EngineStat }> {
  const walk = { asked: path, hops: 0 };
  if (stats) return resolveWith(container, path, signal, stats, walk);
  const fresh = statsOf(container, signal);
  fresh.prefetch(path);
  return resolveWith(container, path, signal, fresh.lookup, walk);
}

/**
 * The parent directory of `path` resolved as {@link resolveInContainer} does, its failures naming
 * `path` (a parent missing: `not_found`; not a directory: `not_directory`), as a lookup of `path`
 * that does not follow its last segment would name them.
 *
 * @example
 * const parent = await resolveParent(container, '/home/svc/link/a.txt', signal);
 * joinPath(parent.path, 'a.txt'); // where the link leads, then a.txt
 */
export async function resolveParent(
  container: Docker.Container,
  path: string,
  signal: AbortSignal,
): Promise<{ path: string; stat: EngineStat }> {
  const fresh = statsOf(container, signal);
  fresh.prefetch(parentOf(path));
  const parent = await resolveWith(container, parentOf(path), signal, fresh.lookup, { asked: path, hops: 0 });
  assertParentDirectory(path, typeOfMode(parent.stat.mode));
  return parent;
}

/** {@link resolveInContainer} of `path`, on the way to `walk.asked`, which its failures name. */
async function resolveWith(
  container: Docker.Container,
  path: string,
  signal: AbortSignal,
  stats: StatLookup,
  walk: { asked: string; hops: number },
): Promise<{ path: string; stat: EngineStat }> {
  if (path === '/') {
    const stat = await stats('/');
    assertExists(stat, walk.asked);
    return { path: '/', stat };
  }
  const parent = await resolveWith(container, parentOf(path), signal, stats, walk);
  assertParentDirectory(walk.asked, typeOfMode(parent.stat.mode));
  const here = joinPath(parent.path, baseName(path));
  const stat = await stats(here);
  assertExists(stat, walk.asked);
  if (typeOfMode(stat.mode) !== 'symlink') return { path: here, stat };
  assertLinkHops(++walk.hops, walk.asked);
  const link = await linkText(container, here, signal);
  const next = normalizeComputerPath(link.startsWith('/') ? link : `${parent.path}/${link}`);
  return resolveWith(container, next, signal, stats, walk);
}

/**
 * The directory `path` resolved, for a write: its nearest existing ancestor must be a directory
 * (`not_directory`) in a writable place (`read_only`); the segments below it that are missing are
 * returned to be made in the write's own tar, or `not_found` unless `parents`. `stats`: a lookup
 * shared with the caller (see {@link statsOf}); by default one of its own, prefetching `path`.
 *
 * @example
 * const { canonical, missing } = await writableDirectory(container, '/home/svc/new/dir', true, signal);
 */
export async function writableDirectory(
  container: Docker.Container,
  path: string,
  parents: boolean,
  signal: AbortSignal,
  stats?: StatLookup,
): Promise<{ canonical: string; missing: string[] }> {
  let lookup = stats;
  if (!lookup) {
    const fresh = statsOf(container, signal);
    fresh.prefetch(path);
    lookup = fresh.lookup;
  }
  const missing: string[] = [];
  for (let at = path; ; at = parentOf(at)) {
    let found: { path: string; stat: EngineStat } | undefined;
    try {
      found = await resolveInContainer(container, at, signal, lookup);
    } catch (error) {
      if (!(error instanceof FileError && error.reason === 'not_found') || at === '/') throw error;
    }
    if (!found) {
      missing.unshift(baseName(at));
      continue;
    }
    assertWriteAncestor(at, typeOfMode(found.stat.mode), found.path);
    assertParentsMade(path, missing.length, parents);
    return { canonical: found.path, missing };
  }
}

/** A symlink's own text, from the one-entry tar the Engine gives for it. */
export async function linkText(
  container: Docker.Container,
  path: string,
  signal: AbortSignal,
): Promise<string> {
  const response = (await container.getArchive({ path, abortSignal: signal })) as IncomingMessage;
  const extract = tar.extract();
  extract.on('error', () => {});
  response.pipe(extract as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of extract) {
      entry.resume();
      return entry.header.linkname ?? '';
    }
    return '';
  } finally {
    response.destroy();
  }
}

/**
 * The numeric owner of what a write makes: the container's user (`Config.User`, from the image).
 * A user or group given by name is looked up in the container's `/etc/passwd` and `/etc/group`
 * (read through the Engine); one that is not there is the driver's non-root fallback, 65534.
 *
 * @example
 * const { uid, gid } = await containerOwner(container, 'svc', signal); // 1000, 1000 on svc/busybox:1
 */
export async function containerOwner(
  container: Docker.Container,
  configUser: string,
  signal: AbortSignal,
): Promise<{ uid: number; gid: number }> {
  const [user = '', group] = configUser.split(':');
  const numeric = (value: string | undefined) =>
    value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
  let uid = numeric(user);
  let gid = numeric(group);
  if (uid === undefined) {
    const entry = (await readSmall(container, '/etc/passwd', signal))
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => fields[0] === user);
    uid = numeric(entry?.[2]) ?? FALLBACK_OWNER.uid;
    if (group === undefined) gid = numeric(entry?.[3]) ?? FALLBACK_OWNER.gid;
  }
  if (gid === undefined && group !== undefined) {
    const entry = (await readSmall(container, '/etc/group', signal))
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => fields[0] === group);
    gid = numeric(entry?.[2]) ?? FALLBACK_OWNER.gid;
  }
  return { uid, gid: gid ?? uid };
}

/** A small text file of the container (at most 64 KiB kept), or '' when it is not there. */
async function readSmall(container: Docker.Container, path: string, signal: AbortSignal): Promise<string> {
  let response: IncomingMessage;
  try {
    response = (await container.getArchive({ path, abortSignal: signal })) as IncomingMessage;
  } catch {
    return '';
  }
  const extract = tar.extract();
  extract.on('error', () => {});
  response.pipe(extract as unknown as NodeJS.WritableStream);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const entry of extract) {
      for await (const chunk of entry) {
        if (size < 64 * 1024) chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
      }
      break;
    }
  } finally {
    response.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}
