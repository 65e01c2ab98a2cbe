import type { components } from '@svc/contract';
import type { Database, Queryable } from '../../platform/db/database.js';
import { invalidArgument } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { lockAuthorizationCode, markAuthorizationCodeUsed } from '../repositories/authorization-codes.js';
import { principalEnabled } from '../repositories/principals.js';
import {
  insertRefreshToken,
  lockRefreshToken,
  markRefreshTokenRotated,
  revokeFamily,
} from '../repositories/refresh-tokens.js';
import { familyOfCode } from '../signin/codes.js';
import { CODE_VERIFIER_PATTERN, verifyPkce } from '../signin/pkce.js';
import { hashSecret, newSecret } from '../signin/secrets.js';
import type { AccessTokens, IssuedToken } from './access-token.js';
import { verifyAssertion } from './assertion.js';
import { AuthError, type AuthFailure } from './errors.js';

/** Refresh tokens expire after 30 days without use (each rotation starts a new 30 days). */
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** What the browser-sign-in grants need. */
export interface GrantDeps {
  db: Database;
  tokens: AccessTokens;
  refreshTokenTtlSeconds?: number;
}

/** The `token` object of a browser-sign-in grant: an access token and the next refresh token. */
export interface GrantedToken extends IssuedToken {
  refresh_token: string;
}

/** A `grant_type` of `POST /auth/token`, as the spec's `GrantType` enum lists them. */
export type GrantType = components['schemas']['GrantType'];

/** The default grant (RFC 7523): the Bearer credential is a signed assertion. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer' satisfies GrantType;

/** What `POST /auth/token` hands a grant: the Bearer credential and the body's PKCE fields. */
export interface GrantRequest {
  credential: string;
  codeVerifier: string | undefined;
  redirectUri: string | undefined;
}

/** What every grant of the token route needs: the browser-sign-in grants' deps and the token URL. */
export interface TokenGrantDeps extends GrantDeps {
  /** The exact token URL an assertion's `aud` must name. */
  tokenUrl: string;
}

/**
 * One exchange per grant type of the spec. Keyed by {@link GrantType}: a grant type the spec adds is
 * a type error here until it has an exchange, and one it drops is an excess key.
 */
const GRANTS: Record<GrantType, (deps: TokenGrantDeps, request: GrantRequest) => Promise<IssuedToken>> = {
  [JWT_BEARER]: async (deps, request) => {
    const { principalId, keyId } = await verifyAssertion(deps.db, request.credential, {
      tokenUrl: deps.tokenUrl,
    });
    return deps.tokens.issue(principalId, { keyId });
  },
  authorization_code: (deps, request) =>
    exchangeAuthorizationCode(deps, {
      code: request.credential,
      codeVerifier: request.codeVerifier,
      redirectUri: request.redirectUri,
    }),
  refresh_token: (deps, request) => exchangeRefreshToken(deps, { refreshToken: request.credential }),
};

/**
 * Exchanges the credential of `POST /auth/token` by its `grant_type` (design §7). Throws `AuthError`
 * (401) when the credential is refused, `invalid_argument` (400) when a field the grant needs is missing.
 *
 * @example
 * const token = await exchangeGrant('refresh_token', { db, tokens, tokenUrl }, {
 *   credential: bearerToken(authorization), codeVerifier: undefined, redirectUri: undefined,
 * });
 */
export function exchangeGrant(
  grant: GrantType,
  deps: TokenGrantDeps,
  request: GrantRequest,
): Promise<IssuedToken> {
  return GRANTS[grant](deps, request);
}

/**
 * What a grant's transaction decided. A refusal is returned, not thrown, so the transaction commits
 * what the refusal did (a replayed code or refresh token revokes its family; a code presented with a
 * wrong verifier is spent) before the 401 is thrown. The token route runs the grant inside the
 * request's transaction and answers the 401 rather than rolling back (see `compose/dispatch.ts`).
 */
type Outcome =
  | { ok: true; principalId: string; refreshToken: string }
  | { ok: false; reason: AuthFailure; message: string };

const refused = (reason: AuthFailure, message: string): Outcome => ({ ok: false, reason, message });

/**
 * `grant_type=authorization_code` (design §7): the Bearer credential is the code from `/signin`.
 * The code is consumed on first presentation whatever happens next, so a wrong verifier cannot be
 * retried; a code presented again revokes the refresh tokens its first use produced. Throws
 * `AuthError` (401) for an unknown, used or expired code, a redirect URI that differs from the one
 * at sign-in, or a verifier that does not match the S256 challenge; `invalid_argument` (400) when a
 * field is missing.
 *
 * @example
 * const token = await exchangeAuthorizationCode({ db, tokens }, {
 *   code: bearerToken(request.headers.get('authorization')),
 *   codeVerifier: body.code_verifier,
 *   redirectUri: body.redirect_uri,
 * });
 * return Response.json({ token });
 */
export async function exchangeAuthorizationCode(
  deps: GrantDeps,
  input: { code: string; codeVerifier: string | undefined; redirectUri: string | undefined },
): Promise<GrantedToken> {
  const { code, codeVerifier, redirectUri } = input;
  const violations = [
    ...(codeVerifier === undefined || !CODE_VERIFIER_PATTERN.test(codeVerifier)
      ? [
          {
            field: 'code_verifier',
            description: 'required with authorization_code: 43–128 characters of [A-Za-z0-9._~-]',
          },
        ]
      : []),
    ...(redirectUri === undefined
      ? [{ field: 'redirect_uri', description: 'required with authorization_code' }]
      : []),
  ];
  if (violations.length > 0) throw invalidArgument(violations);
  const codeHash = hashSecret(code);
  const outcome = await deps.db.transaction(async (tx): Promise<Outcome> => {
    const row = await lockAuthorizationCode(tx, codeHash);
    if (!row) return refused('unknown_key', 'the authorization code is not valid');
    if (row.used) {
      await revokeFamily(tx, familyOfCode(codeHash));
      return refused('replayed', 'the authorization code was already used');
    }
    await markAuthorizationCodeUsed(tx, codeHash);
    if (!row.live) return refused('expired', 'the authorization code has expired');
    if (row.redirect_uri !== redirectUri)
      return refused('bad_claims', 'redirect_uri differs from the one used at sign-in');
    if (!verifyPkce(codeVerifier as string, row.code_challenge))
      return refused('bad_claims', 'code_verifier does not match the code challenge');
    if (!(await principalEnabled(tx, row.principal_id)))
      return refused('principal_unknown', 'the account is disabled');
    const refreshToken = await issueRefreshToken(tx, deps, {
      principalId: row.principal_id,
      familyId: familyOfCode(codeHash),
      parentId: null,
    });
    return { ok: true, principalId: row.principal_id, refreshToken };
  });
  return finish(deps, outcome);
}

/**
 * `grant_type=refresh_token` (design §7): the Bearer credential is a refresh token. It is rotated:
 * the answer carries a new one and the presented one stops working. Presenting a rotated token
 * again (reuse: a copy was stolen, or two clients raced) revokes its whole family, so both holders
 * must sign in again (RFC 9700 §4.14.2). Throws `AuthError` (401) for unknown, rotated, revoked or
 * expired tokens and disabled principals; the revocation is committed before the error is thrown.
 *
 * @example
 * const token = await exchangeRefreshToken({ db, tokens }, { refreshToken: bearerToken(authorization) });
 * return Response.json({ token });
 */
export async function exchangeRefreshToken(
  deps: GrantDeps,
  input: { refreshToken: string },
): Promise<GrantedToken> {
  const outcome = await deps.db.transaction(async (tx): Promise<Outcome> => {
    const row = await lockRefreshToken(tx, hashSecret(input.refreshToken));
    if (!row) return refused('unknown_key', 'the refresh token is not valid');
    if (row.revoked) return refused('key_revoked', 'the refresh token was revoked; sign in again');
    if (row.rotated) {
      await revokeFamily(tx, row.family_id);
      return refused(
        'replayed',
        'the refresh token was already used; every session of this sign-in is revoked, sign in again',
      );
    }
    if (!row.live) return refused('expired', 'the refresh token has expired; sign in again');
    if (!(await principalEnabled(tx, row.principal_id)))
      return refused('principal_unknown', 'the account is disabled');
    await markRefreshTokenRotated(tx, row.id);
    const refreshToken = await issueRefreshToken(tx, deps, {
      principalId: row.principal_id,
      familyId: row.family_id,
      parentId: row.id,
    });
    return { ok: true, principalId: row.principal_id, refreshToken };
  });
  return finish(deps, outcome);
}

async function finish(deps: GrantDeps, outcome: Outcome): Promise<GrantedToken> {
  if (!outcome.ok) throw new AuthError(outcome.reason, outcome.message);
  return { ...(await deps.tokens.issue(outcome.principalId)), refresh_token: outcome.refreshToken };
}

/** A new refresh token of the family: stored by its hash, the secret itself answered once. */
async function issueRefreshToken(
  tx: Queryable,
  deps: GrantDeps,
  token: { principalId: string; familyId: string; parentId: string | null },
): Promise<string> {
  const secret = newSecret();
  await insertRefreshToken(tx, {
    id: newId(),
    familyId: token.familyId,
    principalId: token.principalId,
    tokenHash: hashSecret(secret),
    parentId: token.parentId,
    ttlSeconds: deps.refreshTokenTtlSeconds ?? REFRESH_TOKEN_TTL_SECONDS,
  });
  return secret;
}
