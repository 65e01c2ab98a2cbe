import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { InsecureFileError } from '../../platform/db/data-dir.js';

/** The server's secret key could not be read or made. Start-up stops with this message. */
export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

/** Where the secret key comes from: the environment, or a file beside the data directory. */
export interface SecretKeySource {
  /** `SVC_SECRET_KEY`: 32 bytes in base64url. */
  secretKey: string | undefined;
  /** `SVC_SECRET_KEY_FILE`: read when present, generated (0600, in a 0700 directory) when not. */
  secretKeyFile: string;
}

const KEY_BYTES = 32;
let processKey: Uint8Array | undefined;

/**
 * A key for this process only, for databases that live no longer than it (PGlite in memory: the
 * sandbox and tests). Every `ServerKeys` of the process shares it, so they agree with each other.
 *
 * @example
 * const keys = new ServerKeys(db, ephemeralSecretKey());
 */
export function ephemeralSecretKey(): Uint8Array {
  processKey ??= new Uint8Array(randomBytes(KEY_BYTES));
  return processKey;
}

/**
 * The key that seals the signing keys at rest (AES-256-GCM). From `SVC_SECRET_KEY` when set (what
 * replicas on one PostgreSQL share); otherwise from `secretKeyFile`, generated on first start with
 * mode 0600 in a 0700 directory, outside the database, so a reader of the database alone cannot
 * unseal anything. A key file others can read or write is refused.
 *
 * @example
 * const key = loadSecretKey({ secretKey: process.env.SVC_SECRET_KEY, secretKeyFile: '.svc/secret-key' });
 */
export function loadSecretKey(source: SecretKeySource): Uint8Array {
  if (source.secretKey) return decode(source.secretKey, 'SVC_SECRET_KEY');
  const path = source.secretKeyFile;
  try {
    return readKeyFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Written under a temporary name, then linked into place: link fails when the file exists, so two
  // replicas starting at once end up with one key, and nobody ever reads a half-written file.
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, `${Buffer.from(randomBytes(KEY_BYTES)).toString('base64url')}\n`);
  } finally {
    closeSync(fd);
  }
  chmodSync(temp, 0o600);
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temp);
  }
  return readKeyFile(path);
}

function readKeyFile(path: string): Uint8Array {
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077)
    throw new InsecureFileError(
      `the secret key file ${path} has mode ${mode.toString(8).padStart(4, '0')}: other users can read or ` +
        `write it. Run \`chmod 600 ${path}\` (and rotate it if others may have read it).`,
    );
  return decode(readFileSync(path, 'utf8').trim(), path);
}

function decode(text: string, where: string): Uint8Array {
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== KEY_BYTES || !/^[A-Za-z0-9_-]+$/.test(text))
    throw new SecretKeyError(`${where} must hold 32 random bytes in base64url`);
  return new Uint8Array(bytes);
}

/**
 * The server's secret key as every part of one server sees it: `SVC_SECRET_KEY` or its key file for
 * a database that outlives the process, the process's own key for one that does not (the sandbox).
 *
 * @example
 * const box = new SecretBox(serverSecretKey(config));
 */
export function serverSecretKey(
  config: SecretKeySource & { databaseUrl?: string | undefined; dataDir?: string | undefined },
): Uint8Array {
  const persistent = config.databaseUrl !== undefined || config.dataDir !== undefined;
  return persistent || config.secretKey ? loadSecretKey(config) : ephemeralSecretKey();
}
