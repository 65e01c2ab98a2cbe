// Token sources the browser entry needs: none, a static token, a caller's callback. Key-file auth is in
// key-file-token.ts, behind `@svc/client/node`.
/**
 * Supplies the access token for each request. `forceRefresh` is true when the server has just refused
 * the previous token with 401; return a new one then (or the same, and the call fails with 401).
 *
 * @example
 * import type { GetToken } from '@svc/client';
 * let cached = 'ey...';
 * const getToken: GetToken = async ({ forceRefresh }) => (forceRefresh ? (cached = await refresh()) : cached);
 * declare function refresh(): Promise<string>;
 */
export type GetToken = (context: {
  forceRefresh: boolean;
  signal?: AbortSignal | undefined;
}) => Promise<string>;

/**
 * Where the transport gets its bearer token. `rejected` is the token a 401 just refused; a renewable
 * source then returns a different one. Only renewable sources get the one retry after a 401.
 */
export interface TokenSource {
  token(context: {
    rejected?: string | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<string | undefined>;
  readonly renewable: boolean;
}

/** A token used as is, or none (an anonymous client); never renewed. */
export function staticToken(token: string | undefined): TokenSource {
  return { token: async () => token, renewable: false };
}

export function callbackToken(getToken: GetToken): TokenSource {
  return {
    token: ({ rejected, signal }) => getToken({ forceRefresh: rejected !== undefined, signal }),
    renewable: true,
  };
}
