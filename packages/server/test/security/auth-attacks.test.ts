// HTTP-level attacks on authentication (design §7): every forged, stale, replayed or misplaced
// credential is 401 `unauthenticated` with `WWW-Authenticate: Bearer`, through the app's own fetch.
import type { JWK } from 'jose';
import { base64url, exportJWK, exportSPKI, generateKeyPair, importPKCS8, SignJWT } from 'jose';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { AccessTokens } from '../../src/identity/auth/access-token.js';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import type { KeyFile } from '../../src/identity/auth/keypair.js';
import { newId } from '../../src/platform/ids.js';
import { assertionClaims, craftAssertion as craftSigned } from '../support/credentials.js';
import { describeEngines } from '../support/databases.js';
import type { Answer, Harness } from './support/harness.js';
import { BASE_URL, startHarness, TOKEN_URL } from './support/harness.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => base64url.encode(JSON.stringify(value));

/** The exact refusal of design §9: 401, `unauthenticated`, `WWW-Authenticate: Bearer…`, the envelope. */
function expectUnauthenticated(answer: Answer, what: string): void {
  expect(answer.status, `${what}: ${answer.text}`).toBe(401);
  const error = (answer.body as { error: Record<string, unknown> }).error;
  expect(error.code, what).toBe('unauthenticated');
  expect(error.request_id).toBe(answer.headers.get('request-id'));
  expect(answer.headers.get('www-authenticate'), what).toMatch(/^Bearer\b/);
  // Never echo the credential back.
  expect(answer.text).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
}

/** An assertion with any header and claims we like, signed with the key file's private key. */
const craftAssertion = (file: KeyFile, claims?: Record<string, unknown>, header?: Record<string, unknown>) =>
  craftSigned(TOKEN_URL, file, claims, header);

/** An unsigned JWT (`alg: none`, empty signature). */
function unsigned(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  return `${b64({ alg: 'none', ...header })}.${b64(claims)}.`;
}

/** HS256 with the verifier's PUBLIC key as the HMAC secret: the classic algorithm confusion. */
async function hs256WithPublicKey(
  publicJwk: JWK,
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
): Promise<string[]> {
  const { importJWK } = await import('jose');
  const publicKey = await importJWK(publicJwk, publicJwk.crv === 'P-256' ? 'ES256' : 'EdDSA', {
    extractable: true,
  });
  const secrets = [
    new TextEncoder().encode(await exportSPKI(publicKey as CryptoKey)),
    new TextEncoder().encode(JSON.stringify(publicJwk)),
    base64url.decode(String(publicJwk.x)),
  ];
  return Promise.all(
    secrets.map((secret) =>
      new SignJWT(claims).setProtectedHeader({ ...header, alg: 'HS256' } as { alg: string }).sign(secret),
    ),
  );
}

/** Flips one character in the middle of the signature. */
function tamper(token: string): string {
  const [h, p, s = ''] = token.split('.');
  const i = Math.floor(s.length / 2);
  const flipped = s[i] === 'A' ? 'B' : 'A';
  return `${h}.${p}.${s.slice(0, i)}${flipped}${s.slice(i + 1)}`;
}

describeEngines('auth attacks over HTTP', (engine) => {
  let h: Harness;
  let ownerKey: KeyFile;
  let serverPublicJwk: JWK;
  let serverKid: string;
  const exchange = (credential: string, json?: unknown) =>
    h.call('POST', '/v1/auth/token', { token: credential, ...(json === undefined ? {} : { json }) });
  const me = (token: string) => h.call('GET', '/v1/me', { token });
  const accessClaims = (sub: string) => {
    const iat = nowSeconds();
    return { iss: BASE_URL, aud: BASE_URL, sub, jti: newId(), iat, exp: iat + 600 };
  };

  beforeAll(async () => {
    h = await startHarness(await engine.open());
    ownerKey = h.ownerKeyFile;
    const signing = await h.app.deps.serverKeys.signingKey();
    serverKid = signing.kid;
    const { rows } = await h.db.query<{ public_jwk: JWK }>(
      'SELECT public_jwk FROM server_signing_keys WHERE id = $1',
      [serverKid],
    );
    serverPublicJwk = (rows[0] as { public_jwk: JWK }).public_jwk;
  });
  afterAll(() => h.close());

  test('control: a well-made assertion is exchanged and its token reads /me', async () => {
    const answer = await exchange(await signAssertion(ownerKey, { tokenUrl: TOKEN_URL }));
    expect(answer.status).toBe(200);
    const token = (answer.body as { token: { access_token: string } }).token.access_token;
    expect((await me(token)).status).toBe(200);
  });

  test('no Authorization header: 401 with a bare Bearer challenge', async () => {
    const answer = await h.call('GET', '/v1/me');
    expectUnauthenticated(answer, 'missing');
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  });

  test.each([
    ['Basic scheme', 'Basic b3duZXI6cGFzcw=='],
    ['empty Bearer', 'Bearer '],
    ['two tokens', 'Bearer a.b.c d.e.f'],
    ['not a JWT', 'Bearer not-a-jwt'],
  ])('malformed Authorization (%s): 401', async (_name, header) => {
    expectUnauthenticated(await h.call('GET', '/v1/me', { headers: { authorization: header } }), header);
  });

  // ---- assertions at POST /v1/auth/token --------------------------------------------------------

  test('assertion with alg none: 401', async () => {
    const iat = nowSeconds();
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      const claims = {
        iss: ownerKey.principal_id,
        sub: ownerKey.principal_id,
        aud: TOKEN_URL,
        iat,
        exp: iat + 300,
      };
      const token = unsigned({ alg, kid: ownerKey.key_id, typ: 'JWT' }, { ...claims, jti: newId() });
      expectUnauthenticated(await exchange(token), `alg ${alg}`);
    }
  });

  test('assertion HS256-signed with the key’s public key as the secret: 401', async () => {
    const iat = nowSeconds();
    const { rows } = await h.db.query<{ public_jwk: JWK }>('SELECT public_jwk FROM keys WHERE id = $1', [
      ownerKey.key_id,
    ]);
    const forged = await hs256WithPublicKey(
      (rows[0] as { public_jwk: JWK }).public_jwk,
      { kid: ownerKey.key_id, typ: 'JWT' },
      {
        iss: ownerKey.principal_id,
        sub: ownerKey.principal_id,
        aud: TOKEN_URL,
        iat,
        exp: iat + 300,
        jti: newId(),
      },
    );
    for (const token of forged) expectUnauthenticated(await exchange(token), 'HS256 with public key');
  });

  test('assertion with an unknown kid: 401', async () => {
    expectUnauthenticated(
      await exchange(await craftAssertion(ownerKey, {}, { kid: newId() })),
      'unknown kid',
    );
    expectUnauthenticated(await exchange(await craftAssertion(ownerKey, {}, { kid: undefined })), 'no kid');
  });

  test.each([
    ['iss', { iss: newId() }],
    ['sub', { sub: newId() }],
    ['iss and sub of another principal', { iss: 'x', sub: 'x' }],
    ['aud (the base address)', { aud: BASE_URL }],
    ['aud (another host)', { aud: 'https://evil.test/v1/auth/token' }],
    ['aud (a list with the token URL and more)', { aud: [TOKEN_URL, 'https://evil.test'] }],
  ])('assertion with a wrong %s: 401', async (what, claims) => {
    expectUnauthenticated(await exchange(await craftAssertion(ownerKey, claims)), what);
  });

  test('expired assertion (beyond the 60 s skew): 401', async () => {
    const iat = nowSeconds() - 900;
    expectUnauthenticated(await exchange(await craftAssertion(ownerKey, { iat, exp: iat + 300 })), 'expired');
  });

  test('assertion not yet valid (iat or nbf in the future beyond the skew): 401', async () => {
    const iat = nowSeconds() + 600;
    expectUnauthenticated(
      await exchange(await craftAssertion(ownerKey, { iat, exp: iat + 300 })),
      'future iat',
    );
    expectUnauthenticated(
      await exchange(await craftAssertion(ownerKey, { nbf: nowSeconds() + 600 })),
      'future nbf',
    );
  });

  test('assertion living longer than 10 minutes: 401', async () => {
    const iat = nowSeconds();
    expectUnauthenticated(
      await exchange(await craftAssertion(ownerKey, { iat, exp: iat + 601 })),
      'lifetime 601 s',
    );
    expectUnauthenticated(
      await exchange(await craftAssertion(ownerKey, { iat, exp: iat + 86_400 })),
      'lifetime 1 day',
    );
  });

  test('assertion without exp, iat or jti: 401', async () => {
    for (const claim of ['exp', 'iat', 'jti']) {
      expectUnauthenticated(
        await exchange(await craftAssertion(ownerKey, { [claim]: undefined })),
        `no ${claim}`,
      );
    }
  });

  test('replayed assertion (same jti): the first is exchanged, the replay is 401', async () => {
    const assertion = await signAssertion(ownerKey, { tokenUrl: TOKEN_URL });
    expect((await exchange(assertion)).status).toBe(200);
    expectUnauthenticated(await exchange(assertion), 'replay');
    // A new signature over the same jti is still a replay.
    const jti = newId();
    expect((await exchange(await craftAssertion(ownerKey, { jti }))).status).toBe(200);
    expectUnauthenticated(await exchange(await craftAssertion(ownerKey, { jti })), 'same jti, new signature');
  });

  test('replayed assertion with an Idempotency-Key is still 401 (the answer is not replayed)', async () => {
    const assertion = await signAssertion(ownerKey, { tokenUrl: TOKEN_URL });
    const key = newId();
    expect((await h.call('POST', '/v1/auth/token', { token: assertion, idempotencyKey: key })).status).toBe(
      200,
    );
    const again = await h.call('POST', '/v1/auth/token', { token: assertion, idempotencyKey: key });
    // Either refused, or the very same stored answer; never a second token minted from one assertion.
    if (again.status === 200) expect(again.headers.get('idempotent-replayed')).toBe('true');
    else expectUnauthenticated(again, 'replay with key');
  });

  test('tampered assertion signature: 401', async () => {
    expectUnauthenticated(
      await exchange(tamper(await signAssertion(ownerKey, { tokenUrl: TOKEN_URL }))),
      'tampered',
    );
  });

  test('assertion signed by another key under this kid: 401', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const token = await new SignJWT(assertionClaims(ownerKey, TOKEN_URL))
      .setProtectedHeader({ alg: 'EdDSA', kid: ownerKey.key_id, typ: 'JWT' })
      .sign(privateKey);
    expectUnauthenticated(await exchange(token), 'foreign key');
  });

  test('assertion whose alg differs from the stored key’s (ES256 header on an EdDSA key): 401', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT(assertionClaims(ownerKey, TOKEN_URL))
      .setProtectedHeader({ alg: 'ES256', kid: ownerKey.key_id, typ: 'JWT' })
      .sign(privateKey);
    expectUnauthenticated(await exchange(token), 'alg mismatch');
  });

  test('oversized assertion and access token (over 8 KiB): 401', async () => {
    const big = await craftAssertion(ownerKey, { pad: 'x'.repeat(9000) });
    expectUnauthenticated(await exchange(big), 'oversized assertion');
    expectUnauthenticated(await me(big), 'oversized access token');
    expectUnauthenticated(await me(`${'a'.repeat(40_000)}.b.c`), 'oversized garbage');
  });

  test('revoked key: its assertions are refused and tokens already issued for it stop working', async () => {
    const ws = h.workspace.id;
    const sa = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts`, {
      token: h.ownerToken,
      idempotencyKey: true,
      json: { name: `revokee-${newId().slice(-6)}`, role: 'viewer' },
    });
    const saId = (sa.service_account as { id: string }).id;
    const created = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts/${saId}/keys`, {
      token: h.ownerToken,
      idempotencyKey: true,
    });
    const file = (created.key as { key_file: KeyFile }).key_file;
    const token = await h.exchange(file);
    expect((await me(token)).status).toBe(200);
    const unused = await signAssertion(file, { tokenUrl: TOKEN_URL });
    await h.expectCall(204, 'DELETE', `/v1/workspaces/${ws}/service-accounts/${saId}/keys/${file.key_id}`, {
      token: h.ownerToken,
    });
    expectUnauthenticated(await exchange(unused), 'assertion of a revoked key');
    expectUnauthenticated(await me(token), 'access token of a revoked key');
  });

  test('deleted service account: its tokens are refused on the next request', async () => {
    const ws = h.workspace.id;
    const sa = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts`, {
      token: h.ownerToken,
      idempotencyKey: true,
      json: { name: `deletee-${newId().slice(-6)}`, role: 'editor' },
    });
    const saId = (sa.service_account as { id: string }).id;
    const created = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/service-accounts/${saId}/keys`, {
      token: h.ownerToken,
      idempotencyKey: true,
    });
    const token = await h.exchange((created.key as { key_file: KeyFile }).key_file);
    await h.expectCall(204, 'DELETE', `/v1/workspaces/${ws}/service-accounts/${saId}`, {
      token: h.ownerToken,
    });
    expectUnauthenticated(await me(token), 'token of a deleted service account');
  });

  test('removed member: the token still authenticates /me, but the workspace is 404 not_found', async () => {
    // design §8: roles come from CURRENT membership on every request, never from the token; a
    // non-member gets 404. The token names a principal that still exists, so it still authenticates.
    const ws = h.workspace.id;
    const member = await h.user();
    const added = await h.expectCall(201, 'POST', `/v1/workspaces/${ws}/members`, {
      token: h.ownerToken,
      idempotencyKey: true,
      json: { principal_id: member.id, role: 'editor' },
    });
    await h.expectCall(200, 'GET', `/v1/workspaces/${ws}`, { token: member.token });
    await h.expectCall(204, 'DELETE', `/v1/workspaces/${ws}/members/${(added.member as { id: string }).id}`, {
      token: h.ownerToken,
    });
    const identity = await h.expectCall(200, 'GET', '/v1/me', { token: member.token });
    expect((identity.identity as { workspaces: { id: string }[] }).workspaces.map((w) => w.id)).not.toContain(
      ws,
    );
    for (const path of [
      `/v1/workspaces/${ws}`,
      `/v1/workspaces/${ws}/computers`,
      `/v1/workspaces/${h.workspace.name}`,
    ]) {
      const answer = await h.call('GET', path, { token: member.token });
      expect(answer.status, path).toBe(404);
      expect((answer.body as { error: { code: string } }).error.code).toBe('not_found');
    }
    const write = await h.call('POST', `/v1/workspaces/${ws}/computers`, {
      token: member.token,
      idempotencyKey: true,
      json: { name: 'after-removal', size: 'small', image: 'ubuntu-2404' },
    });
    expect([write.status, (write.body as { error: { code: string } }).error.code]).toEqual([
      404,
      'not_found',
    ]);
  });

  // ---- access tokens at GET /v1/me ----------------------------------------------------------------

  test('access token with alg none: 401', async () => {
    expectUnauthenticated(
      await me(unsigned({ typ: 'at+jwt', kid: serverKid }, accessClaims(h.ownerUserId))),
      'none',
    );
  });

  test('access token HS256-signed with the server’s public key: 401', async () => {
    const forged = await hs256WithPublicKey(
      serverPublicJwk,
      { typ: 'at+jwt', kid: serverKid },
      accessClaims(h.ownerUserId),
    );
    for (const token of forged) expectUnauthenticated(await me(token), 'HS256 with the server public key');
  });

  test('access token with an unknown kid, or signed by a key that is not the server’s: 401', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const sign = (kid: string) =>
      new SignJWT(accessClaims(h.ownerUserId))
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid })
        .sign(privateKey);
    expectUnauthenticated(await me(await sign(newId())), 'unknown kid');
    expectUnauthenticated(await me(await sign(serverKid)), 'right kid, wrong key');
    // Signed with a service account's own key, under that key's id: still not the server's.
    const key = await importPKCS8(ownerKey.private_key, 'EdDSA');
    const selfMade = await new SignJWT(accessClaims(ownerKey.principal_id))
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: ownerKey.key_id })
      .sign(key);
    expectUnauthenticated(await me(selfMade), 'self-issued with a service-account key');
  });

  test.each([
    ['iss', { baseUrl: 'https://evil.test/v1' }],
    ['aud', { baseUrl: `${BASE_URL}/` }],
  ])('access token with a wrong %s (signed by the server key): 401', async (_what, options) => {
    const other = new AccessTokens(h.app.deps.serverKeys, options);
    expectUnauthenticated(await me((await other.issue(h.ownerUserId)).access_token), String(_what));
  });

  test('access token for an unknown subject (signed by the server key): 401', async () => {
    expectUnauthenticated(await me((await h.app.deps.tokens.issue(newId())).access_token), 'unknown sub');
  });

  test('expired and not-yet-valid access tokens (beyond the 60 s skew): 401', async () => {
    const past = new AccessTokens(h.app.deps.serverKeys, {
      baseUrl: BASE_URL,
      now: () => Date.now() - 17 * 60_000,
    });
    expectUnauthenticated(await me((await past.issue(h.ownerUserId)).access_token), 'expired');
    const future = new AccessTokens(h.app.deps.serverKeys, {
      baseUrl: BASE_URL,
      now: () => Date.now() + 5 * 60_000,
    });
    expectUnauthenticated(await me((await future.issue(h.ownerUserId)).access_token), 'not yet valid');
  });

  test('access token living longer than issued tokens do (a day): still bounded by its exp, refused when expired', async () => {
    const long = new AccessTokens(h.app.deps.serverKeys, {
      baseUrl: BASE_URL,
      ttlSeconds: 86_400,
      now: () => Date.now() - 86_400_000 - 120_000,
    });
    expectUnauthenticated(await me((await long.issue(h.ownerUserId)).access_token), 'expired day-long token');
  });

  test('tampered access token (signature, or payload re-encoded to another subject): 401', async () => {
    expectUnauthenticated(await me(tamper(h.ownerToken)), 'tampered signature');
    const [header, payload, signature] = h.ownerToken.split('.') as [string, string, string];
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload)));
    const other = await h.user();
    const swapped = `${header}.${b64({ ...claims, sub: other.id })}.${signature}`;
    expectUnauthenticated(await me(swapped), 'payload swapped');
  });

  test('an assertion is not an access token: GET /me with an assertion is 401', async () => {
    expectUnauthenticated(
      await me(await signAssertion(ownerKey, { tokenUrl: TOKEN_URL })),
      'assertion as token',
    );
    // Even one that claims typ at+jwt and the base address as audience: signed by a client key, not the server.
    const forged = await craftAssertion(ownerKey, { aud: BASE_URL, iss: BASE_URL }, { typ: 'at+jwt' });
    expectUnauthenticated(await me(forged), 'assertion dressed as access token');
  });

  test('an access token is not an assertion: POST /auth/token with an access token is 401', async () => {
    expectUnauthenticated(await exchange(h.ownerToken), 'access token as assertion');
    const token = await h.exchange(ownerKey);
    expectUnauthenticated(await exchange(token), 'exchanged token as assertion');
    expectUnauthenticated(
      await exchange(token, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' }),
      'explicit jwt-bearer',
    );
  });

  test('an access token is not a refresh token or an authorization code: 401', async () => {
    expectUnauthenticated(await exchange(h.ownerToken, { grant_type: 'refresh_token' }), 'as refresh token');
    expectUnauthenticated(
      await exchange(h.ownerToken, {
        grant_type: 'authorization_code',
        code_verifier: 'a'.repeat(43),
        redirect_uri: 'http://127.0.0.1:9/cb',
      }),
      'as authorization code',
    );
  });

  test('a key smuggled in a jwk, jku or x5u header is ignored: 401', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const jwk = await exportJWK(publicKey);
    const token = await new SignJWT(accessClaims(h.ownerUserId))
      .setProtectedHeader({
        alg: 'EdDSA',
        typ: 'at+jwt',
        jwk,
        jku: 'https://evil.test/jwks',
        x5u: 'https://evil.test/x',
      })
      .sign(privateKey);
    expectUnauthenticated(await me(token), 'embedded jwk');
  });
});
