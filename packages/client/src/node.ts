// Node entry (`@svc/client/node`): key-file auth (jose), file system and environment access, which the
// browser entry must not carry, on the retrying client of `@svc/client/retry`. Everything of the browser
// entry is re-exported, so one import serves.
import { readFile, stat } from 'node:fs/promises';
import { keyFileToken } from './auth/key-file-token.js';
import { buildClient, CLIENT_VERSION, type SvcClient } from './client.js';
import type { ApiPaths } from './contract.js';
import { KeyFileError } from './errors.js';
import { type KeyFile, parseKeyFile } from './key-file.js';
import { type RetryClientOptions, retryLoop, retrySend } from './retry.js';

export { createAssertion } from './auth/assertion.js';
export * from './index.js';
export type { RetryClientOptions } from './retry.js';

/**
 * Options of this entry's {@link createClient}: those of `@svc/client/retry` (the browser entry's plus
 * the retry policy), plus a service-account key file.
 *
 * @example
 * import type { NodeClientOptions } from '@svc/client/node';
 * const options: NodeClientOptions = { baseUrl: 'http://127.0.0.1:8080/v1', renewBeforeMs: 30_000 };
 */
export interface NodeClientOptions extends RetryClientOptions {
  /** A service account key: the client signs assertions, exchanges them at POST /auth/token and renews the token. Default `baseUrl`: its `base_url`. */
  keyFile?: KeyFile | undefined;
  /** Renew a key-file token this long before it expires. Default 60 000 ms. */
  renewBeforeMs?: number;
}

/**
 * `createClient` of `@svc/client/retry` (retries on by default), plus the `keyFile` option: the client
 * signs RFC 7523 assertions with the key (jose), exchanges them at `POST /auth/token`, caches the token
 * and renews it before it expires.
 *
 * @example
 * import { createClient, readKeyFile } from '@svc/client/node';
 * const client = createClient({ keyFile: await readKeyFile('.svc/bootstrap-key.json') });
 */
export function createClient<Paths extends {} = ApiPaths>(options: NodeClientOptions = {}): SvcClient<Paths> {
  const { keyFile, renewBeforeMs = 60_000, userAgent = `svc-client/${CLIENT_VERSION}`, ...given } = options;
  const rest = { ...given, userAgent };
  const loop = retryLoop(rest);
  const send = retrySend(loop);
  if (!keyFile) return buildClient<Paths>(rest, { send });
  return buildClient<Paths>(rest, {
    send,
    baseUrl: keyFile.base_url,
    tokens: ({ baseUrl, fetch, userAgent }) =>
      keyFileToken({ keyFile, tokenUrl: `${baseUrl}/auth/token`, fetch, loop, renewBeforeMs, userAgent }),
  });
}

/**
 * Reads and checks a key file (design §7). Throws {@link KeyFileError}: `key_file_unreadable` when the
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
export interface EnvClientOptions extends Omit<NodeClientOptions, 'token' | 'getToken' | 'keyFile'> {
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
