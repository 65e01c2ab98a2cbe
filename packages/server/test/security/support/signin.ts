// Drives the browser sign-in form (GET the form, POST it back) as a script would: one CSRF cookie and
// token, reused for every post, against an in-process app or a real server on 127.0.0.1.
import type { FetchHandler } from '../../../src/http/context.js';
import type { NodeEnv } from '../../../src/http/node-env.js';
import { s256 } from '../../../src/identity/signin/pkce.js';

/** Anything that answers a web-standard request: `app.fetch` bound to a client address, or a socket. */
export type Send = (request: Request) => Promise<Response>;

/** The hidden fields and the cookie of one sign-in form. */
export interface SigninForm {
  origin: string;
  cookie: string;
  hidden: Record<string, string>;
}

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** GETs the sign-in form at `origin` (the public origin the server answers for) through `send`. */
export async function signinForm(send: Send, origin: string, base = origin): Promise<SigninForm> {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: 'svc-cli',
    redirect_uri: 'http://127.0.0.1:53682/callback',
    code_challenge: s256(VERIFIER),
    code_challenge_method: 'S256',
    state: 'security-suite',
  });
  const response = await send(new Request(`${base}/signin/authorize?${query}`));
  if (response.status !== 200) throw new Error(`sign-in form: ${response.status}`);
  const html = await response.text();
  const hidden = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
  return { origin, cookie: (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '', hidden };
}

/** POSTs the form with `email` and `password`; JSON errors unless `html` (a browser's Accept). */
export function postSignin(
  send: Send,
  form: SigninForm,
  fields: { email: string; password: string },
  options: { base?: string; html?: boolean } = {},
): Promise<Response> {
  return send(
    new Request(`${options.base ?? form.origin}/signin/authorize`, {
      method: 'POST',
      body: new URLSearchParams({ ...form.hidden, ...fields }),
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: form.origin,
        cookie: form.cookie,
        accept: options.html ? 'text/html' : 'application/json',
      },
    }),
  );
}

/** `app.fetch` as the Node adapter calls it, with `address` as the client's socket address. */
export function fromAddress(fetch: FetchHandler, address: string): Send {
  // A stand-in for node's request: the server reads only its socket's address (not being a stream, the
  // body is read from the `Request`), so the rest of node:http's objects is left out.
  const env = { incoming: { socket: { remoteAddress: address } } } as unknown as NodeEnv;
  return (request) => fetch(request, env);
}

/** Counts answers by status, plus `429:<policy>` for rate-limited ones. */
export async function tally(responses: Response[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const response of responses) {
    let key = String(response.status);
    if (response.status === 429) {
      const body = (await response.json()) as { error?: { details?: { policy?: string } } };
      key = `429:${body.error?.details?.policy}`;
    } else await response.body?.cancel();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
