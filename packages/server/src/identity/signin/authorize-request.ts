import { isS256Challenge } from './pkce.js';
import { CLI_CLIENT_ID, isLoopbackRedirect } from './redirect.js';

/** The parameters of an authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636 §4.3). */
export const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
] as const;
/** Optional parameters: RFC 8707 `resource` (the MCP endpoint a token is for) and `scope`. */
export const OPTIONAL_AUTHORIZE_PARAMS = ['resource', 'scope'] as const;
export type AuthorizeParams = Record<(typeof AUTHORIZE_PARAMS)[number], string> &
  Partial<Record<(typeof OPTIONAL_AUTHORIZE_PARAMS)[number], string>>;

/** Clients besides `svc-cli` (OAuth dynamic registration) and the resources tokens may be bound to. */
export interface AuthorizeOptions {
  /** The registration of a client id (its redirect URIs), if there is one. */
  client?: (clientId: string) => { redirect_uris: string[]; client_name?: string } | undefined;
  /** The accepted values of `resource`. */
  resources?: readonly string[];
}

/**
 * How a request was judged: `valid`; `refused` (client or redirect URI unknown: show a page, never
 * redirect, RFC 6749 §4.1.2.1, else the server is an open redirector); or `redirect_error` (the
 * redirect URI is trusted, so the error goes back to the client there).
 */
export type AuthorizeCheck =
  | { kind: 'valid'; params: AuthorizeParams }
  | { kind: 'refused'; message: string }
  | {
      kind: 'redirect_error';
      redirectUri: string;
      error: string;
      description: string;
      state: string | undefined;
    };

const MAX_STATE_LENGTH = 512;

/**
 * Checks an authorization request: client `svc-cli`, an exact loopback redirect URI, `response_type=code`,
 * PKCE with `S256` only, a `state`; no parameter twice (RFC 6749 §3.1).
 *
 * @example
 * const check = checkAuthorizeRequest(new URL(request.url).searchParams);
 * if (check.kind === 'valid') showForm(check.params);
 */
export function checkAuthorizeRequest(
  params: URLSearchParams,
  options: AuthorizeOptions = {},
): AuthorizeCheck {
  const single = (name: string): string | undefined => {
    const values = params.getAll(name);
    return values.length === 1 ? values[0] : undefined;
  };
  const clientId = single('client_id');
  const registered =
    clientId === undefined || clientId === CLI_CLIENT_ID ? undefined : options.client?.(clientId);
  if (clientId !== CLI_CLIENT_ID && !registered)
    return {
      kind: 'refused',
      message: `Unknown client: client_id must be ${CLI_CLIENT_ID} or a registered client.`,
    };
  const redirectUri = single('redirect_uri');
  if (registered) {
    // A registered client: exactly one of the redirect URIs it registered (RFC 6749 §3.1.2.3).
    if (redirectUri === undefined || !registered.redirect_uris.includes(redirectUri))
      return { kind: 'refused', message: 'The redirect address is not one this client registered.' };
  } else if (redirectUri === undefined || !isLoopbackRedirect(redirectUri)) {
    return {
      kind: 'refused',
      message:
        'The redirect address is not allowed: only http://127.0.0.1:<port>/callback or http://[::1]:<port>/callback.',
    };
  }
  const state = single('state');
  const fail = (error: string, description: string): AuthorizeCheck => ({
    kind: 'redirect_error',
    redirectUri,
    error,
    description,
    state,
  });
  for (const name of [...AUTHORIZE_PARAMS, ...OPTIONAL_AUTHORIZE_PARAMS]) {
    if (params.getAll(name).length > 1) return fail('invalid_request', `${name} was given more than once`);
  }
  const resource = single('resource');
  if (resource !== undefined && !(options.resources ?? []).includes(resource))
    return fail('invalid_target', 'resource is not a resource of this service');
  const scope = single('scope');
  if (single('response_type') !== 'code')
    return fail('unsupported_response_type', 'response_type must be code');
  if (single('code_challenge_method') !== 'S256')
    return fail('invalid_request', 'PKCE is required, with code_challenge_method=S256');
  const challenge = single('code_challenge');
  if (challenge === undefined || !isS256Challenge(challenge))
    return fail('invalid_request', 'code_challenge must be an S256 challenge (43 base64url characters)');
  if (state === undefined || state === '' || state.length > MAX_STATE_LENGTH)
    return fail('invalid_request', `state is required (at most ${MAX_STATE_LENGTH} characters)`);
  return {
    kind: 'valid',
    params: {
      response_type: 'code',
      client_id: clientId as string, // svc-cli or a registered client: checked above
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      ...(resource === undefined ? {} : { resource }),
      ...(scope === undefined ? {} : { scope }),
    },
  };
}

/**
 * The redirect back to the client: `redirect_uri?code=…&state=…`, or `?error=…&error_description=…&state=…`.
 *
 * @example
 * redirectBack('http://127.0.0.1:5000/callback', { code, state }); // 'http://127.0.0.1:5000/callback?code=…&state=…'
 */
export function redirectBack(redirectUri: string, query: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(query))
    if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}
