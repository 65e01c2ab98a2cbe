/** The one path a loopback redirect may use (the `svc` command-line client listens there). */
export const REDIRECT_PATH = '/callback';

/** The client id of the `svc` command-line client, the one public client of the embedded sign-in. */
export const CLI_CLIENT_ID = 'svc-cli';

/**
 * Whether `uri` is an acceptable redirect: exactly `http://127.0.0.1:<port>/callback` or
 * `http://[::1]:<port>/callback`, any port (RFC 8252 §7.3: loopback clients take an ephemeral port),
 * nothing else: no `localhost` (§8.3: it may resolve off the machine), no user info, query or
 * fragment, no other path. The raw string is matched, never a parsed URL, so forms that parsers read
 * differently (`http://127.1:5/callback`, `http://127.0.0.1:5/%63allback`, a trailing dot…) are refused.
 *
 * @example
 * isLoopbackRedirect('http://127.0.0.1:53682/callback'); // true
 * isLoopbackRedirect('http://localhost:53682/callback'); // false
 */
export function isLoopbackRedirect(uri: string): boolean {
  const match = /^http:\/\/(127\.0\.0\.1|\[::1\]):([1-9][0-9]{0,4})\/callback$/.exec(uri);
  if (!match) return false;
  const port = Number(match[2]);
  return port >= 1 && port <= 65_535;
}
