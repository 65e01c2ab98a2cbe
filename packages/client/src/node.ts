// Node-only entry (`@svc/client/node`): file system and environment access the browser entry must not import.
import { readFile, stat } from 'node:fs/promises';
import { type ClientOptions, createClient, type SvcClient } from './client.js';
import { KeyFileError } from './errors.js';
import { type KeyFile, parseKeyFile } from './key-file.js';

/**
 * Reads and checks a key file (API.md §7). Throws {@link KeyFileError}: `key_file_unreadable` when the
 * file cannot be read or is not JSON, `invalid_key_file` when a field is wrong. Warns (process warning,
 * not an error) when group or others may read the file, since it holds a private key.
 *
 * @example
 * import { readKeyFile } from '@svc/client/node';
 * const keyFile = await readKeyFile('.svc/bootstrap-key.json');
 */
export async function readKeyFile(path: string): Promise<KeyFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new KeyFileError(`Cannot read key file ${path}`, { code: 'key_file_unreadable', cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new KeyFileError(`Key file ${path} is not JSON`, { code: 'key_file_unreadable', cause });
  }
  const keyFile = parseKeyFile(value);
  if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) {
    process.emitWarning(`Key file ${path} is readable by other users; chmod 600 it`, {
      code: 'SVC_KEY_FILE_MODE',
    });
  }
  return keyFile;
}

/**
 * Options of {@link createClientFromEnv}: any {@link ClientOptions} but the credentials, plus the
 * environment to read (default `process.env`).
 *
 * @example
 * import type { EnvClientOptions } from '@svc/client/node';
 * const options: EnvClientOptions = { env: { SVC_KEY_FILE: './key.json' } };
 */
export interface EnvClientOptions extends Omit<ClientOptions, 'token' | 'getToken' | 'keyFile'> {
  env?: Record<string, string | undefined>;
}

/**
 * A key-file client from the environment: `SVC_KEY_FILE` names the key file (required), `SVC_BASE_URL`
 * overrides the key file's `base_url` (an explicit `baseUrl` option overrides both). Throws
 * {@link KeyFileError} `key_file_not_configured` when `SVC_KEY_FILE` is unset.
 *
 * @example
 * import { unwrap } from '@svc/client';
 * import { createClientFromEnv } from '@svc/client/node';
 * const client = await createClientFromEnv();
 * const { identity } = await unwrap(client.GET('/me'));
 */
export async function createClientFromEnv(options: EnvClientOptions = {}): Promise<SvcClient> {
  const { env = process.env, ...rest } = options;
  const path = env.SVC_KEY_FILE;
  if (!path) throw new KeyFileError('SVC_KEY_FILE is not set', { code: 'key_file_not_configured' });
  const keyFile = await readKeyFile(path);
  return createClient({ ...rest, keyFile, baseUrl: rest.baseUrl ?? (env.SVC_BASE_URL || keyFile.base_url) });
}
