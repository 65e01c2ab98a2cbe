import { importPKCS8, SignJWT } from 'jose';
import type { KeyFile } from '../key-file.js';

/** Assertions live 5 minutes; the server accepts at most 10 (design §7). */
const LIFETIME_SECONDS = 300;

/**
 * Signs an RFC 7523 assertion for POST /auth/token: `kid` = key id, `iss` = `sub` = principal id,
 * `aud` = the exact token URL, a fresh `jti` so that every attempt (retries included) is a new assertion
 * and never trips the server's replay check.
 */
export async function signAssertion(
  keyFile: KeyFile,
  key: CryptoKey,
  audience: string,
  nowMs: number,
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: keyFile.algorithm, kid: keyFile.key_id, typ: 'JWT' })
    .setIssuer(keyFile.principal_id)
    .setSubject(keyFile.principal_id)
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LIFETIME_SECONDS)
    .setJti(globalThis.crypto.randomUUID())
    .sign(key);
}

/**
 * A signed assertion for `POST /auth/token` from a key file, for tools that make the exchange
 * themselves (`curl`, an Arazzo runner, `svc auth assertion`): audience `<baseUrl>/auth/token`, valid
 * 5 minutes, a fresh `jti`, so each one can be exchanged once.
 *
 * @example
 * import { createAssertion, parseKeyFile } from '@svc/client/node';
 * const assertion = await createAssertion(parseKeyFile(text));
 * // curl -X POST -H "Authorization: Bearer $assertion" -d '{"grant_type":"urn:ietf:params:oauth:grant-type:jwt-bearer"}' …/v1/auth/token
 */
export async function createAssertion(
  keyFile: KeyFile,
  options: { baseUrl?: string | undefined; now?: number | undefined } = {},
): Promise<string> {
  const baseUrl = (options.baseUrl ?? keyFile.base_url).replace(/\/+$/, '');
  const key = await importPKCS8(keyFile.private_key, keyFile.algorithm);
  return signAssertion(keyFile, key, `${baseUrl}/auth/token`, options.now ?? Date.now());
}
