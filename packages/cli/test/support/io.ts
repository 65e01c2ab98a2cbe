import type { CliIo } from '../../src/io.js';
import { run } from '../../src/program.js';

/** An in-memory run of `svc`: what it printed and how it exited. */
export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `svc` in-process with captured output and the given environment and fetch. */
export async function svc(argv: string[], io: Partial<CliIo> = {}): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    env: {},
    isTTY: false,
    ...io,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** A recorded request (body already read). */
export interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

/**
 * A fetch handler that answers from `routes` (`'GET /workspaces'` → status and body) and records
 * every request. Unknown routes get the API's 404 envelope.
 */
export function fakeApi(
  routes: Record<
    string,
    (seen: Seen) => { status: number; body?: unknown; headers?: Record<string, string> }
  >,
) {
  const seen: Seen[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const text = await request.text();
    const entry: Seen = {
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
    };
    seen.push(entry);
    const path = entry.url.pathname.replace(/^\/v1/, '');
    const route = routes[`${request.method} ${path}`];
    const answer = route
      ? route(entry)
      : { status: 404, body: envelope('not_found', `no route ${path}`, 'req-404') };
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json', 'request-id': 'req-header', ...answer.headers },
    });
  };
  return { fetch, seen };
}

/** The published error envelope. */
export function envelope(
  code: string,
  message: string,
  requestId: string,
  details: Record<string, unknown> = {},
) {
  return { error: { code, message, details, request_id: requestId } };
}
