// What the hooks' tests share: an injected fetch that records requests and answers from a script, and a
// fresh QueryClient per test around the hook under test.
import { createClient } from '@svc/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { createHooks } from '../src/index.js';

export const BASE = 'http://api.test/v1';

/** One request as the injected fetch saw it. */
export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: string;
}

type Answer = (seen: Seen, index: number) => Response | Promise<Response>;

/** A client whose fetch records every request and answers with `answer`; no network, no globals. */
export function scripted(answer: Answer) {
  const seen: Seen[] = [];
  const fetch = async (request: Request) => {
    const url = new URL(request.url);
    const entry: Seen = {
      method: request.method,
      path: url.pathname.replace(/^\/v1/, ''),
      query: url.searchParams,
      headers: new Headers(request.headers),
      body: await request.text(),
    };
    seen.push(entry);
    return answer(entry, seen.length - 1);
  };
  const client = createClient({ baseUrl: BASE, token: 't', fetch });
  let keys = 0;
  const api = createHooks(client, { idempotencyKey: () => `key-${++keys}`, retryDelay: () => 0 });
  return { api, client, seen };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'Request-Id': `req_${status}`, ...headers },
  });
}

export function errorBody(code: string, message = code, details: unknown = null) {
  return { error: { code, message, details, request_id: 'req_err' } };
}

/** A QueryClient for one test: no garbage collection during the test. */
export function testQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: { queries: { gcTime: Infinity } } });
}

export function wrapperFor(queryClient: QueryClient) {
  return ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
  );
}
