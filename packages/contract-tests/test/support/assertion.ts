import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import type { KeyFile } from '@svc/client';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A signed assertion for POST /auth/token (design §7), for callers that cannot sign themselves (an Arazzo
 * workflow takes it as an input). EdDSA keys only; the client signs its own with jose.
 */
export function signAssertion(keyFile: KeyFile, audience: string, nowMs = Date.now()): string {
  if (keyFile.algorithm !== 'EdDSA') throw new Error('signAssertion here supports EdDSA key files only');
  const iat = Math.floor(nowMs / 1000);
  const header = b64url({ alg: 'EdDSA', kid: keyFile.key_id, typ: 'JWT' });
  const claims = b64url({
    iss: keyFile.principal_id,
    sub: keyFile.principal_id,
    aud: audience,
    iat,
    exp: iat + 300,
    jti: randomUUID(),
  });
  const signature = sign(null, Buffer.from(`${header}.${claims}`), createPrivateKey(keyFile.private_key));
  return `${header}.${claims}.${signature.toString('base64url')}`;
}
