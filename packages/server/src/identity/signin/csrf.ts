import { createHmac, randomBytes } from 'node:crypto';
import { newSecret, safeEqual } from './secrets.js';

/** The cookie that holds the CSRF nonce; scoped to `/signin`, never readable by scripts. */
export const CSRF_COOKIE = 'svc_signin_csrf';
/** The form field that carries the signed token. */
export const CSRF_FIELD = 'csrf_token';

/**
 * Signed double-submit CSRF protection (OWASP): the browser holds a random nonce in an HttpOnly,
 * SameSite=Strict cookie, and the form carries HMAC(secret, nonce). A cross-site form can neither
 * read the cookie nor forge the HMAC, and a cookie planted by a sibling subdomain fails the HMAC.
 * Replicas must share `secret`, else a form served by one is refused by another.
 *
 * @example
 * const csrf = new Csrf(secret);
 * const { nonce, setCookie } = csrf.issue(request, secure);
 * const field = csrf.token(nonce); // put in the form
 * csrf.verify(request, formField); // true on submit
 */
export class Csrf {
  private readonly secret: Buffer;

  constructor(secret: string | Uint8Array = randomBytes(32)) {
    this.secret = Buffer.from(secret);
  }

  /** The nonce already in the request's cookie, or a new one with the `Set-Cookie` that stores it. */
  issue(request: Request, secure: boolean): { nonce: string; setCookie?: string } {
    const existing = readCookie(request, CSRF_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { nonce: existing };
    const nonce = newSecret();
    const attributes = [
      'Path=/signin',
      'HttpOnly',
      'SameSite=Strict',
      'Max-Age=3600',
      ...(secure ? ['Secure'] : []),
    ];
    return { nonce, setCookie: `${CSRF_COOKIE}=${nonce}; ${attributes.join('; ')}` };
  }

  /** The form token for a nonce. */
  token(nonce: string): string {
    return createHmac('sha256', this.secret).update(`svc-signin-csrf:${nonce}`).digest('base64url');
  }

  /** True when the request carries the cookie and `field` is its signed token. */
  verify(request: Request, field: string | null): boolean {
    const nonce = readCookie(request, CSRF_COOKIE);
    return Boolean(nonce && field && safeEqual(field, this.token(nonce)));
  }
}

/**
 * One cookie's value from the `Cookie` header, or undefined.
 *
 * @example
 * readCookie(new Request('http://x/', { headers: { cookie: 'a=1; b=2' } }), 'b'); // '2'
 */
function readCookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}
