/**
 * The version prefix the API is served under (docs/conventions.md): the spec's paths are relative to it,
 * so `/me` in the spec is `/v1/me` on the wire.
 */
export const API_PREFIX = '/v1';

const API_ROOT = `${API_PREFIX}/`;

/**
 * The path of a request URL, without its query, as it came off the wire (still percent-encoded). One
 * scan of the string and no `URL` object: it runs for every request.
 *
 * @example
 * pathOf('http://127.0.0.1:8080/v1/workspaces?limit=5'); // '/v1/workspaces'
 */
export function pathOf(url: string): string {
  const start = pathStart(url);
  const end = url.indexOf('?', start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

/**
 * Whether the path of `url` is `path`, query aside, without slicing it out: for a check that runs
 * in front of every request (`GET /ready`).
 *
 * @example
 * isPath('http://127.0.0.1:8080/ready?verbose', '/ready'); // true
 */
export function isPath(url: string, path: string): boolean {
  const start = pathStart(url);
  const end = start + path.length;
  return url.startsWith(path, start) && (url.length === end || url[end] === '?');
}

/** Where the path of an absolute URL starts: the first `/` after `scheme://`. */
function pathStart(url: string): number {
  return url.indexOf('/', url.indexOf('//') + 2);
}

/**
 * The path below {@link API_PREFIX}, which is what the spec's paths describe, or `undefined` for a
 * path outside the API (`/signin`, `/v1` itself, `/v2/me`).
 *
 * @example
 * apiPath('/v1/workspaces/acme'); // '/workspaces/acme'
 * apiPath('/signin'); // undefined
 */
export function apiPath(path: string): string | undefined {
  return path.startsWith(API_ROOT) ? path.slice(API_PREFIX.length) : undefined;
}
