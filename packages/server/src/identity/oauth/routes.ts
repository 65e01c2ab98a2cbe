import type { Database } from '../../platform/db/database.js';
import { ApiError } from '../../platform/errors.js';
import type { AccessTokens } from '../auth/access-token.js';
import { AuthError } from '../auth/errors.js';
import { exchangeAuthorizationCode, exchangeRefreshToken, type GrantedToken } from '../auth/grants.js';
import { CLI_CLIENT_ID } from '../signin/redirect.js';
import type { ClientRegistry } from './clients.js';

/** The paths this module answers. */
export const OAUTH_PATHS = {
  resourceMetadata: '/.well-known/oauth-protected-resource',
  serverMetadata: '/.well-known/oauth-authorization-server',
  register: '/oauth/register',
  token: '/oauth/token',
  authorize: '/signin/authorize',
} as const;

/** What the OAuth routes need. */
export interface OAuthDeps {
  db: Database;
  tokens: AccessTokens;
  clients: ClientRegistry;
  /** The public origin (`new URL(config.baseUrl).origin`): issuer, and the base of every URL here. */
  origin: string;
  /** The protected resource: the MCP endpoint, `<origin>/mcp`. */
  resource: string;
}

const MAX_BODY_BYTES = 16 * 1024;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*', ...headers },
  });
}

/** An RFC 6749 §5.2 error: the format OAuth clients (the MCP SDK's among them) read at these endpoints. */
function oauthError(status: number, error: string, description: string): Response {
  return json(status, { error, error_description: description }, NO_STORE);
}

async function readBody(request: Request): Promise<string | undefined> {
  if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) return undefined;
  const text = await request.text();
  return text.length > MAX_BODY_BYTES ? undefined : text;
}

/**
 * The metadata documents a client reads to sign in by URL alone (MCP authorization):
 * - RFC 9728 protected resource metadata for `/mcp` (at the root and at the path-suffixed address);
 * - RFC 8414 authorization server metadata: the browser sign-in's authorize page, this token
 *   endpoint, dynamic registration, PKCE S256, public clients.
 *
 * @example
 * resourceMetadata({ origin: 'http://127.0.0.1:8080', resource: 'http://127.0.0.1:8080/mcp' });
 */
export function resourceMetadata(deps: Pick<OAuthDeps, 'origin' | 'resource'>) {
  return {
    resource: deps.resource,
    authorization_servers: [deps.origin],
    bearer_methods_supported: ['header'],
    resource_name: 'Cloud Computer Service MCP',
  };
}

/** RFC 8414 metadata of the authorization server at `origin`. */
function serverMetadata(origin: string) {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${origin}${OAUTH_PATHS.token}`,
    registration_endpoint: `${origin}${OAUTH_PATHS.register}`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
  };
}

/**
 * The OAuth routes beside `/mcp`: the two metadata documents, dynamic client registration (RFC 7591)
 * and the token endpoint (form-encoded, RFC 6749 §4.1.3 and §6, with RFC 8707 `resource`). Codes
 * come from the existing browser sign-in (`/signin/authorize`, PKCE S256); the grants are the same
 * as `POST /v1/auth/token`'s (single-use codes, rotated refresh tokens). An access token asked for
 * the MCP resource carries it in its audience beside the API's address. Returns undefined for any
 * other path.
 *
 * @example
 * const oauth = createOAuthRoutes({ db, tokens, clients, origin, resource: `${origin}/mcp` });
 * const answer = await oauth(request); // undefined: not an OAuth path
 */
export function createOAuthRoutes(deps: OAuthDeps): (request: Request) => Promise<Response | undefined> {
  return async (request) => {
    const { pathname } = new URL(request.url);
    const get = request.method === 'GET' || request.method === 'HEAD';
    if (pathname === OAUTH_PATHS.resourceMetadata || pathname === `${OAUTH_PATHS.resourceMetadata}/mcp`)
      return get ? json(200, resourceMetadata(deps)) : oauthError(405, 'invalid_request', 'use GET');
    if (pathname === OAUTH_PATHS.serverMetadata)
      return get ? json(200, serverMetadata(deps.origin)) : oauthError(405, 'invalid_request', 'use GET');
    if (pathname === OAUTH_PATHS.register) {
      if (request.method !== 'POST') return oauthError(405, 'invalid_request', 'use POST');
      const text = await readBody(request);
      let metadata: unknown;
      try {
        metadata = text === undefined ? undefined : JSON.parse(text);
      } catch {
        metadata = undefined;
      }
      if (metadata === undefined)
        return oauthError(
          400,
          'invalid_client_metadata',
          'the body must be JSON client metadata (at most 16 KiB)',
        );
      const registered = deps.clients.register(metadata);
      if (!registered.ok) return oauthError(400, registered.error, registered.description);
      return json(
        201,
        {
          ...registered.client,
          client_id_issued_at: Math.floor(Date.now() / 1000),
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
        NO_STORE,
      );
    }
    if (pathname === OAUTH_PATHS.token) {
      if (request.method !== 'POST') return oauthError(405, 'invalid_request', 'use POST');
      if (
        !(request.headers.get('content-type') ?? '')
          .toLowerCase()
          .startsWith('application/x-www-form-urlencoded')
      )
        return oauthError(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
      const text = await readBody(request);
      if (text === undefined) return oauthError(400, 'invalid_request', 'the body is larger than 16 KiB');
      return token(new URLSearchParams(text));
    }
    return undefined;
  };

  async function token(form: URLSearchParams): Promise<Response> {
    const one = (name: string) => {
      const values = form.getAll(name);
      return values.length === 1 ? values[0] : undefined;
    };
    const clientId = one('client_id');
    if (clientId === undefined || (clientId !== CLI_CLIENT_ID && !deps.clients.lookup(clientId)))
      return oauthError(401, 'invalid_client', 'unknown client_id');
    const resource = one('resource');
    if (resource !== undefined && resource !== deps.resource)
      return oauthError(400, 'invalid_target', `resource must be ${deps.resource}`);
    const grantType = one('grant_type');
    let granted: GrantedToken;
    try {
      if (grantType === 'authorization_code') {
        const code = one('code');
        if (!code) return oauthError(400, 'invalid_request', 'code is required');
        granted = await exchangeAuthorizationCode(deps, {
          code,
          codeVerifier: one('code_verifier'),
          redirectUri: one('redirect_uri'),
        });
      } else if (grantType === 'refresh_token') {
        const refreshToken = one('refresh_token');
        if (!refreshToken) return oauthError(400, 'invalid_request', 'refresh_token is required');
        granted = await exchangeRefreshToken(deps, { refreshToken });
      } else
        return oauthError(
          400,
          'unsupported_grant_type',
          'grant_type must be authorization_code or refresh_token',
        );
    } catch (error) {
      if (error instanceof AuthError) return oauthError(400, 'invalid_grant', error.message);
      if (error instanceof ApiError && error.status === 400)
        return oauthError(400, 'invalid_request', error.message);
      throw error;
    }
    // Audience-bound (RFC 8707): a token asked for the MCP resource names it in `aud`, beside the API
    // address its tool calls are made to.
    const access = resource
      ? await deps.tokens.issue((await deps.tokens.verify(granted.access_token)).sub, {
          resources: [resource],
        })
      : granted;
    return json(
      200,
      {
        access_token: access.access_token,
        token_type: 'Bearer',
        expires_in: access.expires_in,
        refresh_token: granted.refresh_token,
      },
      NO_STORE,
    );
  }
}
