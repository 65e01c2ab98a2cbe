import { exportPKCS8, generateKeyPair } from 'jose';
import type { KeyFile } from '../src/index.js';
import { createClient, type RetryClientOptions } from '../src/retrying.js';

export const BASE = 'http://api.test/v1';

/** One request as the injected fetch saw it (body read as text). */
export interface Seen {
  method: string;
  path: string;
  search: URLSearchParams;
  headers: Headers;
  body: string;
}

type Handler = (request: Request, seen: Seen, index: number) => Response | Promise<Response>;

/** An injected fetch: records every request, answers with `handler`. No network, no globals. */
export function fakeFetch(handler: Handler) {
  const seen: Seen[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const entry: Seen = {
      method: request.method,
      path: url.pathname.replace(/^\/v1/, ''),
      search: url.searchParams,
      headers: new Headers(request.headers),
      body: await request.text(),
    };
    seen.push(entry);
    return handler(request, entry, seen.length - 1);
  };
  return { fetch, seen, on: (path: string) => seen.filter((s) => s.path === path) };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'Request-Id': `req_${status}`, ...headers },
  });
}

export function errorBody(code: string, message = code, details: unknown = null, requestId = 'req_env') {
  return { error: { code, message, details, request_id: requestId } };
}

/** A sleep that records the delays asked for and returns at once. */
export function recordingSleep() {
  const delays: number[] = [];
  const sleep = async (ms: number, signal?: AbortSignal) => {
    signal?.throwIfAborted();
    delays.push(ms);
  };
  return { delays, sleep };
}

/** A retrying client (`@svc/client/retry`) with a static token that records its waits instead of waiting. */
export function testClient(fetch: (r: Request) => Promise<Response>, options: RetryClientOptions = {}) {
  const { sleep } = recordingSleep();
  return createClient({ baseUrl: BASE, token: 'static-token', fetch, sleep, ...options });
}

export async function makeKeyFile(algorithm: KeyFile['algorithm'] = 'EdDSA') {
  const { privateKey, publicKey } = await generateKeyPair(algorithm, { extractable: true });
  const keyFile: KeyFile = {
    type: 'service_account_key',
    key_id: 'key0000000000000000000000a',
    principal_id: 'sa00000000000000000000000a',
    algorithm,
    private_key: await exportPKCS8(privateKey),
    base_url: BASE,
  };
  return { keyFile, publicKey };
}

export function tokenBody(accessToken: string, expiresIn = 900) {
  return {
    token: {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: expiresIn,
      expires_at: new Date(Date.now() + expiresIn * 1000).toISOString(),
    },
  };
}
