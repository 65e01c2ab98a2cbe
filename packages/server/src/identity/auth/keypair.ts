import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Schema } from '@svc/contract';
import type { JWK } from 'jose';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';

/** The algorithms a service-account key may use (design §3): the spec's `KeyAlgorithm`. */
export type KeyAlgorithm = Schema<'KeyAlgorithm'>;
/** Every {@link KeyAlgorithm}: a record of the spec's enum, so an algorithm added there does not compile until listed. */
export const KEY_ALGORITHMS = Object.keys({ EdDSA: true, ES256: true } satisfies Record<
  KeyAlgorithm,
  true
>) as readonly KeyAlgorithm[];

/** A freshly generated key pair: the public half is stored, the private half is shown once. */
export interface GeneratedKeyPair {
  algorithm: KeyAlgorithm;
  publicJwk: JWK;
  /** PKCS#8 PEM. Never stored by the server. */
  privateKeyPem: string;
}

/**
 * Generates a service-account key pair: Ed25519 for `EdDSA`, P-256 for `ES256`.
 *
 * @example
 * const { publicJwk, privateKeyPem } = await generateServiceAccountKey('EdDSA');
 */
export async function generateServiceAccountKey(algorithm: KeyAlgorithm): Promise<GeneratedKeyPair> {
  const { publicKey, privateKey } = await generateKeyPair(algorithm, {
    extractable: true,
    ...(algorithm === 'EdDSA' ? { crv: 'Ed25519' } : {}),
  });
  const publicJwk = await exportJWK(publicKey);
  return { algorithm, publicJwk, privateKeyPem: await exportPKCS8(privateKey) };
}

/** The key file (`SVC_KEY_FILE`) of design §7. */
export interface KeyFile {
  type: 'service_account_key';
  key_id: string;
  principal_id: string;
  algorithm: KeyAlgorithm;
  private_key: string;
  base_url: string;
}

/**
 * Builds the key-file object for a new key.
 *
 * @example
 * const file = keyFile({ keyId, principalId, baseUrl: config.baseUrl, pair });
 */
export function keyFile(input: {
  keyId: string;
  principalId: string;
  baseUrl: string;
  pair: GeneratedKeyPair;
}): KeyFile {
  return {
    type: 'service_account_key',
    key_id: input.keyId,
    principal_id: input.principalId,
    algorithm: input.pair.algorithm,
    private_key: input.pair.privateKeyPem,
    base_url: input.baseUrl,
  };
}

/**
 * Writes a key file with mode 0600 (owner read/write only), creating its directory. With
 * `exclusive`, an existing file is never replaced: the write fails with `EEXIST` instead.
 *
 * @example
 * await writeKeyFile(config.bootstrapKeyFile, file, { exclusive: true });
 */
export async function writeKeyFile(
  path: string,
  file: KeyFile,
  options: { exclusive?: boolean } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(file, null, 2)}\n`, {
    mode: 0o600,
    flag: options.exclusive ? 'wx' : 'w',
  });
}
