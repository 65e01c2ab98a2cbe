import { KeyFileError } from './errors.js';

/**
 * A service account's key file (design §7; the file `SVC_KEY_FILE` names). It is a file format, not an
 * API payload, so the spec does not describe it and this type is its one definition in the client.
 *
 * @example
 * import type { KeyFile } from '@svc/client';
 * const algorithmOf = (key: KeyFile) => key.algorithm;
 */
export interface KeyFile {
  type: 'service_account_key';
  key_id: string;
  principal_id: string;
  algorithm: 'EdDSA' | 'ES256';
  /** PKCS#8 PEM. */
  private_key: string;
  /** The API base address, ending in `/v1`. */
  base_url: string;
}

const ALGORITHMS: readonly string[] = ['EdDSA', 'ES256'] satisfies KeyFile['algorithm'][];

/**
 * Checks a parsed key file and returns it typed; throws {@link KeyFileError} (`invalid_key_file`) naming
 * the first bad field. Browser-safe: read the file yourself, or use `readKeyFile` from `@svc/client/node`.
 *
 * @example
 * import { parseKeyFile } from '@svc/client';
 * const keyFile = parseKeyFile(JSON.parse('{"type":"service_account_key"}'));
 */
export function parseKeyFile(value: unknown): KeyFile {
  const bad = (why: string): never => {
    throw new KeyFileError(`Invalid key file: ${why}`, { code: 'invalid_key_file' });
  };
  if (typeof value !== 'object' || value === null) return bad('not a JSON object');
  const record = value as Record<string, unknown>;
  if (record.type !== 'service_account_key') bad('"type" must be "service_account_key"');
  for (const field of ['key_id', 'principal_id', 'private_key', 'base_url'] as const) {
    if (typeof record[field] !== 'string' || record[field] === '')
      bad(`"${field}" must be a non-empty string`);
  }
  if (typeof record.algorithm !== 'string' || !ALGORITHMS.includes(record.algorithm)) {
    bad(`"algorithm" must be one of ${ALGORITHMS.join(', ')}`);
  }
  if (!String(record.private_key).includes('-----BEGIN PRIVATE KEY-----'))
    bad('"private_key" must be a PKCS#8 PEM');
  return record as unknown as KeyFile;
}
