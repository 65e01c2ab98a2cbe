import type { Database } from '../../platform/db/database.js';
import { ApiError, errorResponse } from '../../platform/errors.js';
import { type CounterStore, counterStore } from '../../platform/ratelimit-store.js';
import { newRequestId } from '../../platform/request-id.js';
import { checkLocalPassword, usernameOf } from './accounts.js';
import { SigninAttempts, type SigninAttemptsOptions, type SigninPolicy } from './attempts.js';
import {
  AUTHORIZE_PARAMS,
  type AuthorizeOptions,
  type AuthorizeParams,
  checkAuthorizeRequest,
  OPTIONAL_AUTHORIZE_PARAMS,
  redirectBack,
} from './authorize-request.js';
import { issueAuthorizationCode } from './codes.js';
import { CSRF_FIELD, Csrf } from './csrf.js';
import { HashingGate } from './hashing-gate.js';
import { messagePage, PAGE_HEADERS, signinFormPage } from './page.js';
import { CLI_CLIENT_ID } from './redirect.js';

/**
 * What {@link createSigninHandler} needs; `Env` is what the server's adapter passes along with each
 * request (the Node adapter's `{ incoming, outgoing }`), read only by {@link SigninDeps.clientAddress}.
 */
export interface SigninDeps<Env = unknown> {
  db: Database;
  /**
   * The public origin of the service (e.g. `new URL(config.baseUrl).origin`): form posts from any
   * other `Origin` are refused, and the CSRF cookie is `Secure` when it is https. Default: the
   * origin of each request's URL.
   */
  publicOrigin?: string;
  /** Signs CSRF tokens; share it between replicas. Default: random per process. */
  csrfSecret?: string | Uint8Array;
  /**
   * The client's address, for rate limiting (e.g. the socket's remote address, from the adapter's
   * `env`). Default: none, so limits are per account.
   */
  clientAddress?: (request: Request, env: Env | undefined) => string | undefined;
  attempts?: SigninAttemptsOptions;
  /** Where the attempt counters live; default {@link counterStore} of `db` (shared on PostgreSQL). */
  counters?: CounterStore;
  /** Password checks run at once in this process (default {@link HashingGate}'s); more get 429. */
  hashConcurrency?: number;
  /** Authorization-code lifetime, at most 60 s (the default). */
  codeTtlSeconds?: number;
  /** Registered OAuth clients (MCP clients) and the resources their tokens may be bound to. */
  authorize?: AuthorizeOptions;
}

const MAX_FORM_BYTES = 16 * 1024;

/**
 * The browser sign-in (design §7) as a web-standard handler for every path under `/signin`, outside
 * `/v1` on the API's origin:
 *
 * - `GET /signin`: explains that sign-in starts from `svc login`.
 * - `GET /signin/authorize?response_type=code&client_id=svc-cli&redirect_uri=http://127.0.0.1:PORT/callback&code_challenge=…&code_challenge_method=S256&state=…`:
 *   the sign-in form for local accounts (RFC 8252 loopback redirect, PKCE S256 only).
 * - `POST /signin/authorize` (the form): CSRF-checked; limited per client address, per account, and
 *   per account and address (an attempt is reserved atomically before its password check, see
 *   {@link SigninAttempts}); password checks run a few at a time ({@link HashingGate}); on
 *   success `303` to `redirect_uri?code=…&state=…` with a single-use code valid 60 s.
 *
 * An unknown client or a redirect URI that is not an exact loopback callback gets a 400 page and
 * is never redirected to.
 *
 * @example
 * const signin = createSigninHandler({ db, publicOrigin: new URL(config.baseUrl).origin });
 * const core = (request: Request) =>
 *   new URL(request.url).pathname.startsWith('/signin') ? signin(request) : api(request);
 */
export function createSigninHandler<Env = unknown>(
  deps: SigninDeps<Env>,
): (request: Request, env?: Env) => Promise<Response> {
  const csrf = new Csrf(deps.csrfSecret);
  const attempts = new SigninAttempts(deps.counters ?? counterStore(deps.db), deps.attempts);
  const gate = new HashingGate(deps.hashConcurrency);
  return async (request, env) => {
    const url = new URL(request.url);
    const origin = deps.publicOrigin ?? url.origin;
    if (url.pathname === '/signin' || url.pathname === '/signin/') {
      if (request.method !== 'GET' && request.method !== 'HEAD') return notAllowed('GET, HEAD');
      return page(
        200,
        messagePage('Sign in to svc', 'Sign-in starts from the command line: run `svc login`.'),
      );
    }
    if (url.pathname !== '/signin/authorize')
      return page(404, messagePage('Not found', 'There is no such page.'));
    if (request.method === 'GET' || request.method === 'HEAD')
      return showForm(request, url.searchParams, origin);
    if (request.method === 'POST') return submit(request, origin, deps.clientAddress?.(request, env));
    return notAllowed('GET, HEAD, POST');
  };

  function showForm(
    request: Request,
    query: URLSearchParams,
    origin: string,
    extra: { email?: string; error?: string; status?: number } = {},
  ): Response {
    const check = checkAuthorizeRequest(query, deps.authorize);
    if (check.kind === 'refused') return page(400, messagePage('Sign-in refused', check.message));
    if (check.kind === 'redirect_error') return redirectError(check);
    const { nonce, setCookie } = csrf.issue(request, origin.startsWith('https:'));
    const registered =
      check.params.client_id === CLI_CLIENT_ID ? undefined : deps.authorize?.client?.(check.params.client_id);
    const client = registered && {
      name: registered.client_name ?? 'an unnamed application',
      redirectOrigin: new URL(check.params.redirect_uri).origin,
    };
    const html = signinFormPage({
      hidden: { ...check.params, [CSRF_FIELD]: csrf.token(nonce) },
      ...extra,
      ...(client ? { client } : {}),
    });
    return page(extra.status ?? 200, html, setCookie ? { 'set-cookie': setCookie } : {});
  }

  async function submit(request: Request, origin: string, address: string | undefined): Promise<Response> {
    const sentOrigin = request.headers.get('origin');
    if (sentOrigin !== null && sentOrigin !== origin)
      return page(403, messagePage('Sign-in refused', 'The form was sent from another site.'));
    const form = await readForm(request);
    if (!form) return page(400, messagePage('Sign-in refused', 'The form could not be read.'));
    if (!csrf.verify(request, form.get(CSRF_FIELD))) {
      return page(
        403,
        messagePage(
          'Sign-in refused',
          'The sign-in form expired or was not sent by this site. Run `svc login` again.',
        ),
      );
    }
    const query = new URLSearchParams();
    for (const name of [...AUTHORIZE_PARAMS, ...OPTIONAL_AUTHORIZE_PARAMS])
      for (const value of form.getAll(name)) query.append(name, value);
    const check = checkAuthorizeRequest(query, deps.authorize);
    if (check.kind === 'refused') return page(400, messagePage('Sign-in refused', check.message));
    if (check.kind === 'redirect_error') return redirectError(check);
    const email = form.get('email') ?? '';
    const password = form.get('password') ?? '';
    const attempt = await attempts.reserve(usernameOf(email), address ?? '');
    if (!attempt.allowed)
      return tooMany(request, query, origin, email, attempt.policy, attempt.retryAfterSeconds);
    const principalId = await gate.tryRun(() => checkLocalPassword(deps.db, email, password));
    if (principalId === HashingGate.BUSY) {
      await attempt.cancel();
      return tooMany(request, query, origin, email, 'password-hashing', 1);
    }
    if (!principalId) {
      await attempt.failed();
      return showForm(request, query, origin, { email, status: 401, error: 'Wrong email or password.' });
    }
    await attempt.succeeded();
    return issueAndRedirect(check.params, principalId);
  }

  /**
   * 429 with `Retry-After`: the form again with a message for a browser (it asks for text/html), the
   * published error envelope (`rate_limited`, `details.policy`, `details.retry_after_seconds`) for
   * any other client.
   */
  function tooMany(
    request: Request,
    query: URLSearchParams,
    origin: string,
    email: string,
    policy: SigninPolicy | 'password-hashing',
    retryAfterSeconds: number,
  ): Response {
    const headers = { 'retry-after': String(retryAfterSeconds) };
    if ((request.headers.get('accept') ?? '').includes('text/html')) {
      const response = showForm(request, query, origin, {
        email,
        status: 429,
        error:
          policy === 'password-hashing'
            ? 'The service is busy. Try again in a second.'
            : `Too many attempts. Try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s).`,
      });
      response.headers.set('retry-after', headers['retry-after']);
      return response;
    }
    return errorResponse(
      new ApiError('rate_limited', `sign-in limit ${policy} exceeded; retry after ${retryAfterSeconds} s`, {
        details: { policy, retry_after_seconds: retryAfterSeconds },
        headers,
      }),
      newRequestId(),
      PAGE_HEADERS,
    );
  }

  async function issueAndRedirect(params: AuthorizeParams, principalId: string): Promise<Response> {
    const code = await issueAuthorizationCode(
      deps.db,
      { principalId, redirectUri: params.redirect_uri, codeChallenge: params.code_challenge },
      deps.codeTtlSeconds,
    );
    return new Response(null, {
      status: 303,
      headers: {
        ...PAGE_HEADERS,
        location: redirectBack(params.redirect_uri, { code, state: params.state }),
      },
    });
  }
}

function redirectError(check: {
  redirectUri: string;
  error: string;
  description: string;
  state: string | undefined;
}): Response {
  const location = redirectBack(check.redirectUri, {
    error: check.error,
    error_description: check.description,
    state: check.state,
  });
  return new Response(null, { status: 303, headers: { ...PAGE_HEADERS, location } });
}

async function readForm(request: Request): Promise<URLSearchParams | undefined> {
  const type = request.headers.get('content-type') ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) return undefined;
  const length = Number(request.headers.get('content-length') ?? 0);
  if (length > MAX_FORM_BYTES) return undefined;
  const text = await request.text();
  if (text.length > MAX_FORM_BYTES) return undefined;
  return new URLSearchParams(text);
}

function page(status: number, html: string, headers: Record<string, string> = {}): Response {
  return new Response(html, { status, headers: { ...PAGE_HEADERS, ...headers } });
}

function notAllowed(allow: string): Response {
  return page(405, messagePage('Method not allowed', `Use ${allow}.`), { allow });
}
