import type { ProtectedHeaderParameters } from 'jose';
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { newId } from '../../platform/ids.js';
import { AuthError } from './errors.js';
import { CLOCK_SKEW_SECONDS, fromJoseError, MAX_TOKEN_BYTES } from './jose-errors.js';
import { checkClaimTypes, checkHeaderTypes } from './jwt-shape.js';
import type { ServerKeys } from './signing-keys.js';

/** The `typ` of our access tokens (RFC 9068); assertions must not carry it. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
/** design §7: access tokens live 15 minutes. */
export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

/** What a verified access token says. */
export interface AccessTokenClaims {
  /** The principal id. */
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  /** The service-account key the token was exchanged for, so its revocation ends the token too. */
  key_id?: string;
}

/** The `token` object of the POST /auth/token response (design §7), minus `refresh_token`. */
export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  expires_at: string;
}

export interface AccessTokenOptions {
  /** The base address, `iss` and `aud` of every token. */
  baseUrl: string;
  ttlSeconds?: number;
  /** Injectable clock (ms), for tests. */
  now?: () => number;
}

/**
 * Issues and verifies access tokens: EdDSA JWTs with `typ: at+jwt`, `iss` = `aud` = the base address,
 * `sub`, `jti`, 15 minutes. Verification allows 60 s of clock skew, refuses anything over 8 KiB before
 * parsing, and caches verified tokens until they expire (a token is verified once per replica, not
 * once per request; the caller still checks the principal and key against the database).
 *
 * @example
 * const tokens = new AccessTokens(new ServerKeys(db), { baseUrl: config.baseUrl });
 * const issued = await tokens.issue(principalId);
 * const claims = await tokens.verify(issued.access_token); // claims.sub === principalId
 */
export class AccessTokens {
  private readonly baseUrl: string;
  private readonly ttl: number;
  private readonly now: () => number;
  private readonly verified = new Map<string, AccessTokenClaims>();

  constructor(
    private readonly keys: ServerKeys,
    options: AccessTokenOptions,
  ) {
    this.baseUrl = options.baseUrl;
    this.ttl = options.ttlSeconds ?? ACCESS_TOKEN_TTL_SECONDS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Signs a new access token for `sub`. `resources` (RFC 8707) are added to its audience beside the
   * base address, e.g. the MCP endpoint a client asked for with `resource`.
   */
  async issue(
    sub: string,
    options: { keyId?: string; resources?: readonly string[] } = {},
  ): Promise<IssuedToken> {
    const { kid, privateKey } = await this.keys.signingKey();
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + this.ttl;
    const access_token = await new SignJWT(options.keyId ? { key_id: options.keyId } : {})
      .setProtectedHeader({ alg: 'EdDSA', typ: ACCESS_TOKEN_TYPE, kid })
      .setIssuer(this.baseUrl)
      .setAudience(options.resources?.length ? [this.baseUrl, ...options.resources] : this.baseUrl)
      .setSubject(sub)
      .setJti(newId())
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(privateKey);
    return {
      access_token,
      token_type: 'Bearer',
      expires_in: this.ttl,
      expires_at: new Date(exp * 1000).toISOString(),
    };
  }

  /** Verifies an access token; throws `AuthError` (401) for anything else, assertions included. */
  async verify(token: string): Promise<AccessTokenClaims> {
    const nowSeconds = this.now() / 1000;
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp + CLOCK_SKEW_SECONDS > nowSeconds) return cached;
      this.verified.delete(token);
    }
    if (token.length > MAX_TOKEN_BYTES) throw new AuthError('too_large', 'the access token is too large');
    let header: ProtectedHeaderParameters;
    try {
      header = decodeProtectedHeader(token);
    } catch (error) {
      throw new AuthError('malformed', 'the access token is not a well-formed JWT', error);
    }
    checkHeaderTypes(header, 'access token');
    if (header.alg !== 'EdDSA')
      throw new AuthError('algorithm_not_allowed', 'the access token algorithm is not allowed');
    if (header.typ !== ACCESS_TOKEN_TYPE)
      throw new AuthError(
        'wrong_type',
        `this credential is not an access token (typ must be ${ACCESS_TOKEN_TYPE})`,
      );
    const key = typeof header.kid === 'string' ? await this.keys.verificationKey(header.kid) : undefined;
    if (!key) throw new AuthError('unknown_key', 'the access token was not signed by this service');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: ['EdDSA'],
        typ: ACCESS_TOKEN_TYPE,
        issuer: this.baseUrl,
        audience: this.baseUrl,
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: new Date(this.now()),
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      }));
    } catch (error) {
      throw fromJoseError(error, 'access token');
    }
    checkClaimTypes(payload, 'access token');
    if ('key_id' in payload && typeof payload.key_id !== 'string')
      throw new AuthError('bad_claims', 'the access token claim "key_id" must be a string');
    if ((payload.iat as number) > nowSeconds + CLOCK_SKEW_SECONDS)
      throw new AuthError('not_yet_valid', 'the access token is not valid yet');
    const claims: AccessTokenClaims = {
      sub: String(payload.sub),
      jti: String(payload.jti),
      iat: payload.iat as number,
      exp: payload.exp as number,
      ...(typeof payload.key_id === 'string' ? { key_id: payload.key_id } : {}),
    };
    if (this.verified.size >= 10_000) this.verified.clear();
    this.verified.set(token, claims);
    return claims;
  }
}
