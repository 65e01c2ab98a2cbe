import { base64url, exportSPKI, SignJWT } from 'jose';
import { beforeAll, describe, expect, test } from 'vitest';
import { AccessTokens } from '../../src/identity/auth/access-token.js';
import { signAssertion, verifyAssertion } from '../../src/identity/auth/assertion.js';
import type { AuthFailure } from '../../src/identity/auth/errors.js';
import { AuthError } from '../../src/identity/auth/errors.js';
import type { KeyFile } from '../../src/identity/auth/keypair.js';
import { ServerKeys } from '../../src/identity/auth/signing-keys.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { craftAssertion } from '../support/credentials.js';
import { describeEngines, describePostgres } from '../support/databases.js';
import { addKey, BASE_URL, createServiceAccount, TOKEN_URL } from '../support/fixtures.js';

const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => base64url.encode(JSON.stringify(value));

/** An assertion with any header and claims we like, signed with `file`'s private key. */
const craft = (file: KeyFile, claims?: Record<string, unknown>, header?: Record<string, unknown>) =>
  craftAssertion(TOKEN_URL, file, claims, header);

async function rejection(
  promise: Promise<unknown>,
): Promise<{ status: number; code: string; reason: AuthFailure } | 'accepted'> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    return { status: error.status, code: error.code, reason: error.reason };
  }
}

describeEngines('verifyAssertion', (engine) => {
  let db: Database;
  let principalId: string;
  let ed: KeyFile;
  let es: KeyFile;
  let other: KeyFile;
  let revoked: KeyFile;
  let expired: KeyFile;
  let accessTokens: AccessTokens;
  const verify = (token: string) => verifyAssertion(db, token, { tokenUrl: TOKEN_URL });

  beforeAll(async () => {
    db = await engine.open();
    ({ principalId } = await createServiceAccount(db));
    ed = await addKey(db, principalId);
    es = await addKey(db, principalId, { algorithm: 'ES256' });
    revoked = await addKey(db, principalId);
    await db.query(`UPDATE keys SET state = 'revoked' WHERE id = $1`, [revoked.key_id]);
    expired = await addKey(db, principalId, { expiresAt: new Date(Date.now() - 1000) });
    other = await addKey(db, (await createServiceAccount(db)).principalId);
    accessTokens = new AccessTokens(new ServerKeys(db), { baseUrl: BASE_URL });
  });

  test.each([
    ['EdDSA', () => ed],
    ['ES256', () => es],
  ])('a valid %s assertion names its principal and key, and marks the key used', async (_name, file) => {
    const result = await verify(await signAssertion(file(), { tokenUrl: TOKEN_URL }));
    expect(result).toEqual({ principalId, keyId: file().key_id });
    const { rows } = await db.query<{ last_used_at: Date | null }>(
      'SELECT last_used_at FROM keys WHERE id = $1',
      [file().key_id],
    );
    expect(rows[0]?.last_used_at).toBeInstanceOf(Date);
  });

  test('within 60 s of clock skew is fine', async () => {
    const iat = now() + 50;
    expect(await rejection(verify(await craft(ed, { iat, exp: iat + 600 })))).toBe('accepted');
  });

  type Attack = () => Promise<string>;
  const attacks: [string, Attack, AuthFailure][] = [
    [
      'alg none',
      async () =>
        `${b64({ alg: 'none', kid: ed.key_id, typ: 'JWT' })}.${b64({ iss: principalId, sub: principalId, aud: TOKEN_URL, iat: now(), exp: now() + 60, jti: newId() })}.`,
      'algorithm_not_allowed',
    ],
    [
      'HS256 signed with the public key as the secret',
      async () => {
        const { rows } = await db.query<{ public_jwk: object }>('SELECT public_jwk FROM keys WHERE id = $1', [
          ed.key_id,
        ]);
        const { importJWK } = await import('jose');
        const pem = await exportSPKI((await importJWK(rows[0]!.public_jwk as never, 'EdDSA')) as never);
        const iat = now();
        return new SignJWT({
          iss: principalId,
          sub: principalId,
          aud: TOKEN_URL,
          iat,
          exp: iat + 60,
          jti: newId(),
        })
          .setProtectedHeader({ alg: 'HS256', kid: ed.key_id })
          .sign(new TextEncoder().encode(pem));
      },
      'algorithm_not_allowed',
    ],
    [
      'header alg differs from the stored key (ES256 key, EdDSA header)',
      async () => craft({ ...ed, key_id: es.key_id }),
      'algorithm_not_allowed',
    ],
    ['unknown kid', () => craft(ed, {}, { kid: newId() }), 'unknown_key'],
    ['no kid', () => craft(ed, {}, { kid: undefined }), 'malformed'],
    [
      "signed by another principal's key under this kid",
      () => craft({ ...other, key_id: ed.key_id, principal_id: principalId }),
      'bad_signature',
    ],
    [
      'tampered signature',
      async () => {
        const token = await craft(ed);
        const last = token.at(-2) === 'A' ? 'B' : 'A';
        return `${token.slice(0, -2)}${last}${token.at(-1)}`;
      },
      'bad_signature',
    ],
    [
      'tampered payload',
      async () => {
        const [h, , s] = (await craft(ed)).split('.');
        return `${h}.${b64({ iss: principalId, sub: principalId, aud: TOKEN_URL, iat: now(), exp: now() + 60, jti: 'forged' })}.${s}`;
      },
      'bad_signature',
    ],
    ['wrong iss', () => craft(ed, { iss: other.principal_id }), 'bad_claims'],
    ['wrong sub', () => craft(ed, { sub: other.principal_id }), 'bad_claims'],
    [
      'iss = sub = another principal',
      () => craft(ed, { iss: other.principal_id, sub: other.principal_id }),
      'bad_claims',
    ],
    ['aud is the base address', () => craft(ed, { aud: BASE_URL }), 'bad_claims'],
    ['aud with a trailing slash', () => craft(ed, { aud: `${TOKEN_URL}/` }), 'bad_claims'],
    [
      'aud array with the token URL and another',
      () => craft(ed, { aud: [TOKEN_URL, 'https://evil.test'] }),
      'bad_claims',
    ],
    ['no jti', () => craft(ed, { jti: undefined }), 'bad_claims'],
    ['expired (beyond the 60 s skew)', () => craft(ed, { iat: now() - 400, exp: now() - 61 }), 'expired'],
    ['not yet valid (nbf in the future)', () => craft(ed, { nbf: now() + 120 }), 'not_yet_valid'],
    [
      'issued in the future (beyond skew)',
      () => craft(ed, { iat: now() + 120, exp: now() + 300 }),
      'not_yet_valid',
    ],
    ['lifetime over 10 min', () => craft(ed, { iat: now(), exp: now() + 601 }), 'lifetime_too_long'],
    ['revoked key', () => signAssertion(revoked, { tokenUrl: TOKEN_URL }), 'key_revoked'],
    ['expired key', () => signAssertion(expired, { tokenUrl: TOKEN_URL }), 'key_expired'],
    ['oversized (> 8 KiB), refused before parsing', () => craft(ed, { pad: 'x'.repeat(9000) }), 'too_large'],
    ['garbage', async () => 'not.a.jwt', 'malformed'],
    ['typ at+jwt on a key-signed token', () => craft(ed, {}, { typ: 'at+jwt' }), 'wrong_type'],
    [
      'an access token of this service',
      async () => (await accessTokens.issue(principalId)).access_token,
      'wrong_type',
    ],
  ];

  test.each(attacks)('refuses: %s', async (_name, make, reason) => {
    expect(await rejection(verify(await make()))).toEqual({ status: 401, code: 'unauthenticated', reason });
  });

  test('refuses a replayed jti', async () => {
    const token = await signAssertion(ed, { tokenUrl: TOKEN_URL });
    expect(await rejection(verify(token))).toBe('accepted');
    expect(await rejection(verify(token))).toEqual({
      status: 401,
      code: 'unauthenticated',
      reason: 'replayed',
    });
  });

  test('a jti is scoped to its issuer: another principal may use the same value', async () => {
    const jti = newId();
    expect(await rejection(verify(await craft(ed, { jti })))).toBe('accepted');
    expect(await rejection(verify(await craft(other, { jti })))).toBe('accepted');
  });

  test('AuthError carries WWW-Authenticate: Bearer', async () => {
    const error = await verify('x.y.z').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });
});

describePostgres('verifyAssertion under concurrency', (engine) => {
  test('the same assertion sent 10 times at once is accepted exactly once', async () => {
    const db = await engine.open({ poolSize: 10 });
    const { principalId } = await createServiceAccount(db);
    const file = await addKey(db, principalId);
    const token = await signAssertion(file, { tokenUrl: TOKEN_URL });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => rejection(verifyAssertion(db, token, { tokenUrl: TOKEN_URL }))),
    );
    expect(results.filter((result) => result === 'accepted')).toHaveLength(1);
    expect(results.filter((result) => result !== 'accepted')).toEqual(
      Array.from({ length: 9 }, () => ({ status: 401, code: 'unauthenticated', reason: 'replayed' })),
    );
  });
});

describe('signAssertion', () => {
  test('sets typ JWT, kid, iss = sub, aud, a 5-minute lifetime and a fresh jti', async () => {
    const { generateServiceAccountKey, keyFile } = await import('../../src/identity/auth/keypair.js');
    const file = keyFile({
      keyId: newId(),
      principalId: newId(),
      baseUrl: BASE_URL,
      pair: await generateServiceAccountKey('EdDSA'),
    });
    const [header, payload] = (await signAssertion(file, { tokenUrl: TOKEN_URL }))
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(new TextDecoder().decode(base64url.decode(part!))));
    expect(header).toEqual({ alg: 'EdDSA', kid: file.key_id, typ: 'JWT' });
    expect(payload).toMatchObject({ iss: file.principal_id, sub: file.principal_id, aud: TOKEN_URL });
    expect(payload.exp - payload.iat).toBe(300);
  });
});
