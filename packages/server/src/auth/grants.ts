import type { Database, Queryable } from '../db/database.js';
import { invalidArgument } from '../errors.js';
import { newId } from '../ids.js';
import { familyOfCode } from '../signin/codes.js';
import { CODE_VERIFIER_PATTERN, verifyPkce } from '../signin/pkce.js';
import { hashSecret, newSecret } from '../signin/secrets.js';
import type { AccessTokens, IssuedToken } from './access-token.js';
import { AuthError, type AuthFailure } from './errors.js';

/** Refresh tokens expire after 30 days without use (each rotation starts a new 30 days). */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

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

/** Writes a refusal must make even when the caller's transaction rolls back. */
export interface RefusalWrites {
  /** A replayed code or refresh token: revoke this refresh-token family. */
  revokeFamily?: string;
  /** A code presented with a wrong verifier or redirect URI: spend it anyway. */
  spendCode?: string;
}

/**
 * 401 from a browser-sign-in grant. `writes` are the security effects of the refusal (family revoked,
 * code spent). The grant commits them in its own transaction; when the grant ran inside a caller's
 * transaction that then rolls back (the token route runs in the request's idempotency transaction),
 * the caller must apply them again with {@link persistGrantRefusal} after the rollback.
 *
 * @example
 * if (error instanceof GrantRefusal) console.log(error.reason, error.writes);
 */
export class GrantRefusal extends AuthError {
  override name = 'GrantRefusal';
  readonly writes: RefusalWrites;

  constructor(reason: AuthFailure, message: string, writes: RefusalWrites = {}) {
    super(reason, message);
    this.writes = writes;
  }
}

/**
 * Applies the writes of a {@link GrantRefusal} on `db` (outside any rolled-back transaction);
 * idempotent, and a no-op for any other error. Call it where the token route's transaction ended
 * with an error, or reuse detection is undone by the rollback.
 *
 * @example
 * try {
 *   return await runIdempotent(db, scope, (tx) => exchangeToken(tx));
 * } catch (error) {
 *   await persistGrantRefusal(db, error);
 *   throw error;
 * }
 */
export async function persistGrantRefusal(db: Queryable, error: unknown): Promise<void> {
  if (!(error instanceof GrantRefusal)) return;
  if (error.writes.revokeFamily) await revokeFamily(db, error.writes.revokeFamily);
  if (error.writes.spendCode) {
    await db.query('UPDATE authorization_codes SET used_at = COALESCE(used_at, now()) WHERE code_hash = $1', [
      error.writes.spendCode,
    ]);
  }
}

type Outcome =
  | { ok: true; principalId: string; refreshToken: string }
  | { ok: false; reason: AuthFailure; message: string; writes?: RefusalWrites };

const refused = (reason: AuthFailure, message: string, writes?: RefusalWrites): Outcome => ({
  ok: false,
  reason,
  message,
  ...(writes ? { writes } : {}),
});

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
    const { rows } = await tx.query<{
      principal_id: string;
      redirect_uri: string;
      code_challenge: string;
      used: boolean;
      live: boolean;
    }>(
      `SELECT principal_id, redirect_uri, code_challenge, used_at IS NOT NULL AS used, expires_at > now() AS live
         FROM authorization_codes WHERE code_hash = $1 FOR UPDATE`,
      [codeHash],
    );
    const row = rows[0];
    if (!row) return refused('unknown_key', 'the authorization code is not valid');
    if (row.used) {
      await revokeFamily(tx, familyOfCode(codeHash));
      return refused('replayed', 'the authorization code was already used', {
        revokeFamily: familyOfCode(codeHash),
      });
    }
    await tx.query('UPDATE authorization_codes SET used_at = now() WHERE code_hash = $1', [codeHash]);
    const spend = { spendCode: codeHash };
    if (!row.live) return refused('expired', 'the authorization code has expired', spend);
    if (row.redirect_uri !== redirectUri)
      return refused('bad_claims', 'redirect_uri differs from the one used at sign-in', spend);
    if (!verifyPkce(codeVerifier as string, row.code_challenge))
      return refused('bad_claims', 'code_verifier does not match the code challenge', spend);
    if (!(await principalEnabled(tx, row.principal_id)))
      return refused('principal_unknown', 'the account is disabled', spend);
    const refreshToken = await insertRefreshToken(tx, deps, {
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
    const { rows } = await tx.query<{
      id: string;
      family_id: string;
      principal_id: string;
      rotated: boolean;
      revoked: boolean;
      live: boolean;
    }>(
      `SELECT id, family_id, principal_id, rotated_at IS NOT NULL AS rotated, revoked_at IS NOT NULL AS revoked, expires_at > now() AS live
         FROM refresh_tokens WHERE token_hash = $1 FOR UPDATE`,
      [hashSecret(input.refreshToken)],
    );
    const row = rows[0];
    if (!row) return refused('unknown_key', 'the refresh token is not valid');
    if (row.revoked) return refused('key_revoked', 'the refresh token was revoked; sign in again');
    if (row.rotated) {
      await revokeFamily(tx, row.family_id);
      return refused(
        'replayed',
        'the refresh token was already used; every session of this sign-in is revoked, sign in again',
        { revokeFamily: row.family_id },
      );
    }
    if (!row.live) return refused('expired', 'the refresh token has expired; sign in again');
    if (!(await principalEnabled(tx, row.principal_id)))
      return refused('principal_unknown', 'the account is disabled');
    await tx.query('UPDATE refresh_tokens SET rotated_at = now() WHERE id = $1', [row.id]);
    const refreshToken = await insertRefreshToken(tx, deps, {
      principalId: row.principal_id,
      familyId: row.family_id,
      parentId: row.id,
    });
    return { ok: true, principalId: row.principal_id, refreshToken };
  });
  return finish(deps, outcome);
}

async function finish(deps: GrantDeps, outcome: Outcome): Promise<GrantedToken> {
  if (!outcome.ok) throw new GrantRefusal(outcome.reason, outcome.message, outcome.writes);
  return { ...(await deps.tokens.issue(outcome.principalId)), refresh_token: outcome.refreshToken };
}

async function insertRefreshToken(
  tx: Queryable,
  deps: GrantDeps,
  token: { principalId: string; familyId: string; parentId: string | null },
): Promise<string> {
  const secret = newSecret();
  await tx.query(
    `INSERT INTO refresh_tokens (id, family_id, principal_id, token_hash, parent_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [
      newId(),
      token.familyId,
      token.principalId,
      hashSecret(secret),
      token.parentId,
      deps.refreshTokenTtlSeconds ?? REFRESH_TOKEN_TTL_SECONDS,
    ],
  );
  return secret;
}

async function revokeFamily(tx: Queryable, familyId: string): Promise<void> {
  await tx.query('UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [
    familyId,
  ]);
}

async function principalEnabled(tx: Queryable, principalId: string): Promise<boolean> {
  const { rows } = await tx.query<{ enabled: boolean }>(
    'SELECT disabled_at IS NULL AS enabled FROM principals WHERE id = $1',
    [principalId],
  );
  return rows[0]?.enabled === true;
}
