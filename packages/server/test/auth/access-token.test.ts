import { base64url, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, expect, test } from 'vitest';
import { AccessTokens } from '../../src/identity/auth/access-token.js';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import { authenticate, bearerToken } from '../../src/identity/auth/authenticate.js';
import type { AuthFailure } from '../../src/identity/auth/errors.js';
import type { KeyFile } from '../../src/identity/auth/keypair.js';
import { ServerKeys } from '../../src/identity/auth/signing-keys.js';
import type { Database } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { refusalReason } from '../support/credentials.js';
import { describeEngines, describePostgres } from '../support/databases.js';
import { addKey, BASE_URL, createServiceAccount, TOKEN_URL } from '../support/fixtures.js';

const decode = (part: string) => JSON.parse(new TextDecoder().decode(base64url.decode(part)));

const reason = refusalReason;

describeEngines('access tokens', (engine) => {
  let db: Database;
  let keys: ServerKeys;
  let tokens: AccessTokens;
  let principalId: string;
  let file: KeyFile;

  beforeAll(async () => {
    db = await engine.open();
    keys = new ServerKeys(db);
    tokens = new AccessTokens(keys, { baseUrl: BASE_URL });
    ({ principalId } = await createServiceAccount(db));
    file = await addKey(db, principalId);
  });

  /** A well-formed access token for `principalId` under `kid`, signed by a key the service never issued. */
  async function signedByStranger(kid: string): Promise<string> {
    const { privateKey } = await generateKeyPair('EdDSA');
    return new SignJWT({ jti: 'x' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid })
      .setIssuer(BASE_URL)
      .setAudience(BASE_URL)
      .setSubject(principalId)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
  }

  test('an issued token has the header and claims of design §7 and verifies', async () => {
    const issued = await tokens.issue(principalId);
    expect(issued).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    const [header, payload] = issued.access_token
      .split('.')
      .slice(0, 2)
      .map((part) => decode(part));
    expect(header).toEqual({ alg: 'EdDSA', typ: 'at+jwt', kid: (await keys.signingKey()).kid });
    expect(payload).toMatchObject({ iss: BASE_URL, aud: BASE_URL, sub: principalId });
    expect(payload.exp - payload.iat).toBe(900);
    expect(new Date(issued.expires_at).getTime()).toBe(payload.exp * 1000);
    expect(await tokens.verify(issued.access_token)).toMatchObject({ sub: principalId, jti: payload.jti });
  });

  test('replicas sharing the database sign with the same persisted key', async () => {
    const [a, b] = await Promise.all([new ServerKeys(db).signingKey(), new ServerKeys(db).signingKey()]);
    expect(a.kid).toBe(b.kid);
    const token = (await new AccessTokens(new ServerKeys(db), { baseUrl: BASE_URL }).issue(principalId))
      .access_token;
    expect(await reason(tokens.verify(token))).toBe('accepted');
  });

  const at = (offsetSeconds: number) => () => Date.now() + offsetSeconds * 1000;
  test.each([
    ['just issued', 0, 'accepted'],
    ['14 min later', 14 * 60, 'accepted'],
    ['15 min + 59 s later (within skew)', 15 * 60 + 59, 'accepted'],
    ['15 min + 61 s later', 15 * 60 + 61, 'expired'],
    ['checked 2 min before it was issued', -120, 'not_yet_valid'],
  ] as const)('lifetime: %s', async (_name, offset, want) => {
    const token = (await tokens.issue(principalId)).access_token;
    const later = new AccessTokens(keys, { baseUrl: BASE_URL, now: at(offset) });
    expect(await reason(later.verify(token))).toBe(want);
  });

  type Forge = () => Promise<string>;
  const forged: [string, Forge, AuthFailure][] = [
    [
      'alg none',
      async () => {
        const kid = (await keys.signingKey()).kid;
        const b64 = (value: unknown) => base64url.encode(JSON.stringify(value));
        return `${b64({ alg: 'none', typ: 'at+jwt', kid })}.${b64({ iss: BASE_URL, aud: BASE_URL, sub: principalId, jti: 'x', iat: 1, exp: 9e9 })}.`;
      },
      'algorithm_not_allowed',
    ],
    [
      'HS256',
      async () =>
        new SignJWT({ sub: principalId })
          .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: (await keys.signingKey()).kid })
          .sign(new Uint8Array(32)),
      'algorithm_not_allowed',
    ],
    ['signed by a key the service does not know', async () => signedByStranger(newId()), 'unknown_key'],
    [
      'signed by another key under the real kid',
      async () => signedByStranger((await keys.signingKey()).kid),
      'bad_signature',
    ],
    [
      'issued for another base address',
      async () =>
        (await new AccessTokens(keys, { baseUrl: 'https://other.test/v1' }).issue(principalId)).access_token,
      'bad_claims',
    ],
    [
      'tampered payload',
      async () => {
        const [h, , s] = (await tokens.issue(principalId)).access_token.split('.');
        return `${h}.${base64url.encode(JSON.stringify({ iss: BASE_URL, aud: BASE_URL, sub: newId(), jti: 'x', iat: 1, exp: 9e9 }))}.${s}`;
      },
      'bad_signature',
    ],
    ['a signed assertion', () => signAssertion(file, { tokenUrl: TOKEN_URL }), 'wrong_type'],
    [
      'an assertion-shaped token signed by the server key (typ JWT, aud token URL)',
      async () => {
        const { kid, privateKey } = await keys.signingKey();
        return new SignJWT({ jti: 'x' })
          .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid })
          .setIssuer(principalId)
          .setSubject(principalId)
          .setAudience(TOKEN_URL)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey);
      },
      'wrong_type',
    ],
    ['oversized (> 8 KiB)', async () => `${'a'.repeat(8200)}.b.c`, 'too_large'],
    ['garbage', async () => 'garbage', 'malformed'],
  ];
  test.each(forged)('refuses: %s', async (_name, forge, want) => {
    expect(await reason(tokens.verify(await forge()))).toBe(want);
  });

  test('authenticate loads the principal; a revoked key ends the tokens issued for it', async () => {
    const ownKey = await addKey(db, principalId);
    const token = (await tokens.issue(principalId, { keyId: ownKey.key_id })).access_token;
    expect(await authenticate(db, tokens, `Bearer ${token}`)).toMatchObject({
      id: principalId,
      kind: 'service_account',
      name: 'robot',
    });
    await db.query(`UPDATE keys SET state = 'revoked' WHERE id = $1`, [ownKey.key_id]);
    expect(await reason(authenticate(db, tokens, `Bearer ${token}`))).toBe('key_revoked');
  });

  test('authenticate refuses a disabled or unknown principal', async () => {
    const stranger = (await tokens.issue(newId())).access_token;
    expect(await reason(authenticate(db, tokens, `Bearer ${stranger}`))).toBe('principal_unknown');
    const { principalId: disabled } = await createServiceAccount(db);
    await db.query('UPDATE principals SET disabled_at = now() WHERE id = $1', [disabled]);
    expect(
      await reason(authenticate(db, tokens, `Bearer ${(await tokens.issue(disabled)).access_token}`)),
    ).toBe('principal_unknown');
  });
});

test.each([
  ['no header', undefined, 'missing'],
  ['empty', '', 'missing'],
  ['Basic', 'Basic dXNlcjpwYXNz', 'malformed'],
  ['Bearer without a token', 'Bearer ', 'malformed'],
  ['two tokens', 'Bearer a b', 'malformed'],
  ['lowercase scheme', 'bearer abc.def.ghi', 'accepted'],
  ['Bearer token', 'Bearer abc.def.ghi', 'accepted'],
] as const)('bearerToken: %s', async (_name, header, want) => {
  expect(await reason((async () => bearerToken(header))())).toBe(want);
});

describePostgres('signing key creation race', (engine) => {
  test('replicas that start on an empty database at once agree on one signing key', async () => {
    const db = await engine.open();
    const replicas = [db, ...(await Promise.all([1, 2, 3].map(() => engine.replica(db))))];
    const kids = await Promise.all(
      replicas.map(async (replica) => (await new ServerKeys(replica).signingKey()).kid),
    );
    expect(new Set(kids).size).toBe(1);
    expect((await db.query('SELECT 1 FROM server_signing_keys')).rowCount).toBe(1);
  });
});
