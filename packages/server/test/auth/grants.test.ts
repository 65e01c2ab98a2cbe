import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AccessTokens } from '../../src/identity/auth/access-token.js';
import type { AuthFailure } from '../../src/identity/auth/errors.js';
import {
  exchangeAuthorizationCode,
  exchangeRefreshToken,
  type GrantDeps,
} from '../../src/identity/auth/grants.js';
import { ServerKeys } from '../../src/identity/auth/signing-keys.js';
import { setLocalAccount } from '../../src/identity/signin/accounts.js';
import { issueAuthorizationCode } from '../../src/identity/signin/codes.js';
import { s256 } from '../../src/identity/signin/pkce.js';
import { hashSecret } from '../../src/identity/signin/secrets.js';
import type { Database } from '../../src/platform/db/database.js';
import { ApiError } from '../../src/platform/errors.js';
import { errorOf, openTestApp, type TestApp } from '../support/app.js';
import { refusalReason } from '../support/credentials.js';
import { describeEngines } from '../support/databases.js';
import { BASE_URL } from '../support/fixtures.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const REDIRECT = 'http://127.0.0.1:53682/callback';

const reason = refusalReason;

describeEngines('browser sign-in grants', (engine) => {
  let db: Database;
  let deps: GrantDeps;
  let principalId: string;
  let counter = 0;

  const newCode = () =>
    issueAuthorizationCode(db, { principalId, redirectUri: REDIRECT, codeChallenge: s256(VERIFIER) });
  const exchange = (
    code: string,
    overrides: { codeVerifier?: string | undefined; redirectUri?: string | undefined } = {},
  ) => exchangeAuthorizationCode(deps, { code, codeVerifier: VERIFIER, redirectUri: REDIRECT, ...overrides });

  beforeAll(async () => {
    db = await engine.open();
    deps = { db, tokens: new AccessTokens(new ServerKeys(db), { baseUrl: BASE_URL }) };
    ({ principalId } = await setLocalAccount(db, {
      email: `grace${counter++}@example.com`,
      password: 'correct horse battery',
    }));
  });

  test('a code, its verifier and redirect URI give an access token for the principal and a refresh token', async () => {
    const token = await exchange(await newCode());
    expect(token).toMatchObject({
      token_type: 'Bearer',
      expires_in: 900,
      refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect((await deps.tokens.verify(token.access_token)).sub).toBe(principalId);
  });

  test.each<[string, { overrides: { codeVerifier?: string; redirectUri?: string }; want: AuthFailure }]>([
    ['wrong verifier', { overrides: { codeVerifier: `x${VERIFIER.slice(1)}` }, want: 'bad_claims' }],
    ['other redirect URI', { overrides: { redirectUri: 'http://127.0.0.1:1/callback' }, want: 'bad_claims' }],
  ])('%s → 401, and the code is spent', async (_name, { overrides, want }) => {
    const code = await newCode();
    expect(await reason(exchange(code, overrides))).toBe(want);
    expect(await reason(exchange(code))).toBe('replayed');
  });

  test('a missing code_verifier is 400 invalid_argument', async () => {
    const error = await exchange(await newCode(), { codeVerifier: undefined }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect([(error as ApiError).status, (error as ApiError).code]).toEqual([400, 'invalid_argument']);
  });

  test('unknown code → 401', async () => {
    expect(await reason(exchange('not-a-code-not-a-code-not-a-code-not-a-cod'))).toBe('unknown_key');
  });

  test('expired code → 401 expired', async () => {
    const code = await newCode();
    await db.query(
      `UPDATE authorization_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1`,
      [hashSecret(code)],
    );
    expect(await reason(exchange(code))).toBe('expired');
  });

  test('code single use: a second use is refused and revokes the refresh tokens of the first', async () => {
    const code = await newCode();
    const first = await exchange(code);
    expect(await reason(exchange(code))).toBe('replayed');
    expect(await reason(exchangeRefreshToken(deps, { refreshToken: first.refresh_token }))).toBe(
      'key_revoked',
    );
  });

  test('refresh rotates; reusing the old token revokes the whole family', async () => {
    const first = await exchange(await newCode());
    const second = await exchangeRefreshToken(deps, { refreshToken: first.refresh_token });
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await deps.tokens.verify(second.access_token)).sub).toBe(principalId);
    const third = await exchangeRefreshToken(deps, { refreshToken: second.refresh_token });
    // Reuse of a rotated token: refused, and the newest token of the family dies with it.
    expect(await reason(exchangeRefreshToken(deps, { refreshToken: first.refresh_token }))).toBe('replayed');
    expect(await reason(exchangeRefreshToken(deps, { refreshToken: third.refresh_token }))).toBe(
      'key_revoked',
    );
  });

  test('another sign-in (another family) survives the revocation of the first', async () => {
    const a = await exchange(await newCode());
    const b = await exchange(await newCode());
    await exchangeRefreshToken(deps, { refreshToken: a.refresh_token });
    expect(await reason(exchangeRefreshToken(deps, { refreshToken: a.refresh_token }))).toBe('replayed');
    expect(await reason(exchangeRefreshToken(deps, { refreshToken: b.refresh_token }))).toBe('accepted');
  });

  test('expired refresh token → 401 expired', async () => {
    const token = await exchange(await newCode());
    await db.query(
      `UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`,
      [hashSecret(token.refresh_token)],
    );
    expect(await reason(exchangeRefreshToken(deps, { refreshToken: token.refresh_token }))).toBe('expired');
  });

  test('a password reset revokes every refresh token of the account', async () => {
    const { principalId: other } = await setLocalAccount(db, {
      email: 'reset@example.com',
      password: 'first password',
    });
    const code = await issueAuthorizationCode(db, {
      principalId: other,
      redirectUri: REDIRECT,
      codeChallenge: s256(VERIFIER),
    });
    const token = await exchange(code);
    const again = await setLocalAccount(db, { email: 'Reset@Example.com', password: 'second password' });
    expect(again).toMatchObject({ principalId: other, created: false });
    expect(await reason(exchangeRefreshToken(deps, { refreshToken: token.refresh_token }))).toBe(
      'key_revoked',
    );
  });

  describe('through POST /v1/auth/token', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await openTestApp(engine);
    });
    afterAll(() => t.close());
    const codeFor = async (email: string) => {
      const { principalId: grace } = await setLocalAccount(t.db, {
        email,
        password: 'correct horse battery',
      });
      return issueAuthorizationCode(t.db, {
        principalId: grace,
        redirectUri: REDIRECT,
        codeChallenge: s256(VERIFIER),
      });
    };
    const grant = (token: string, body: Record<string, string>) =>
      t.call('POST', '/v1/auth/token', { token, body });
    const byCode = (code: string, verifier: string) =>
      grant(code, { grant_type: 'authorization_code', code_verifier: verifier, redirect_uri: REDIRECT });

    test('a replayed refresh token is 401 and its family stays revoked', async () => {
      const first = await byCode(await codeFor('route@example.com'), VERIFIER);
      expect(first.status).toBe(200);
      const second = await grant(first.body.token.refresh_token, { grant_type: 'refresh_token' });
      expect(second.status).toBe(200);
      // The reuse is refused; the revocation it made is committed with the answer, not rolled back.
      const reuse = await grant(first.body.token.refresh_token, { grant_type: 'refresh_token' });
      expect([reuse.status, errorOf(reuse).code]).toEqual([401, 'unauthenticated']);
      const after = await grant(second.body.token.refresh_token, { grant_type: 'refresh_token' });
      expect([after.status, errorOf(after).code]).toEqual([401, 'unauthenticated']);
    });

    test('a wrong verifier spends the code', async () => {
      const code = await codeFor('spent@example.com');
      expect((await byCode(code, `y${VERIFIER.slice(1)}`)).status).toBe(401);
      expect((await byCode(code, VERIFIER)).status).toBe(401);
    });
  });
});
