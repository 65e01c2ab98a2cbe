/**
 * Escapes text for HTML element content and double-quoted attributes.
 *
 * @example
 * escapeHtml('<a href="x">'); // '&lt;a href=&quot;x&quot;&gt;'
 */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Headers of every sign-in page: not cached, not framed, no scripts. `Referrer-Policy: same-origin`
 * keeps the query (state, challenge) from other sites; not `no-referrer`, which makes browsers send
 * `Origin: null` on the form post, and the post's Origin is checked.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // No form-action: Chrome applies it to the redirect after the form, and the loopback port varies.
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
});

const STYLE = `body{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem;color:#1d1d1f}
label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1.2rem}.error{color:#b00020}.muted{color:#666;font-size:.9rem}`;

/**
 * A whole page around `body` (already escaped HTML).
 *
 * @example
 * htmlPage('Signed out', '<p>Bye.</p>');
 */
function htmlPage(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** What the sign-in form shows and carries. */
export interface SigninForm {
  /** The authorization request, echoed in hidden fields and checked again on submit. */
  hidden: Record<string, string>;
  email?: string;
  error?: string;
  /** A registered (MCP) client asking instead of `svc`: its self-declared name and where the code goes. */
  client?: { name: string; redirectOrigin: string };
}

/**
 * The sign-in form for local accounts.
 *
 * @example
 * signinFormPage({ hidden: { client_id: 'svc-cli', csrf_token: token }, error: 'Wrong email or password.' });
 */
export function signinFormPage(form: SigninForm): string {
  const hidden = Object.entries(form.hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const error = form.error ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : '';
  // A registered client names itself; the page says so, and where the sign-in will be sent.
  const who = form.client
    ? `The application “${escapeHtml(form.client.name)}” asked to sign you in; the sign-in goes to <code>${escapeHtml(form.client.redirectOrigin)}</code>. Continue only if you started this.`
    : 'The <code>svc</code> command-line client on this computer asked to sign you in.';
  return htmlPage(
    'Sign in to svc',
    `<h1>Sign in</h1><p class="muted">${who}</p>${error}
<form method="post" action="/signin/authorize">${hidden}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(form.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

/**
 * A page that only explains, e.g. a refused authorization request (never redirected).
 *
 * @example
 * messagePage('Sign-in refused', 'The redirect address is not allowed.');
 */
export function messagePage(title: string, message: string): string {
  return htmlPage(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}
