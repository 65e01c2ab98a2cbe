import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError } from './exit-codes.js';

/** A loopback redirect listener (RFC 8252 §7.3) waiting for one authorization response. */
export interface Loopback {
  /** `http://127.0.0.1:<port>/callback`, the exact `redirect_uri` of the request. */
  redirectUri: string;
  /** Resolves with the code once a redirect with the right `state` arrives; rejects on `error=…` or timeout. */
  code: Promise<string>;
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:system-ui,sans-serif;margin:4rem auto;max-width:30rem"><h1>${title}</h1><p>${text}</p></body>`;

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Listens on 127.0.0.1 on a free port for the browser's redirect back to `/callback`. Requests with
 * another path get 404; a redirect whose `state` differs is answered 400 and ignored (it is not ours,
 * and must not end the wait); `error=…` with our state ends the wait with that error. The listener
 * only ever accepts one code.
 *
 * @example
 * const loopback = await startLoopback({ state, timeoutMs: 300_000 });
 * openBrowser(authorizeUrl(loopback.redirectUri));
 * const code = await loopback.code;
 * await loopback.close();
 */
export async function startLoopback(options: {
  state: string;
  timeoutMs: number;
  host?: string;
}): Promise<Loopback> {
  const host = options.host ?? '127.0.0.1';
  let settle: { resolve: (code: string) => void; reject: (error: Error) => void } | undefined;
  const code = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let done = false;
  const finish = (outcome: { code: string } | { error: Error }) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    if ('code' in outcome) settle?.resolve(outcome.code);
    else settle?.reject(outcome.error);
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const reply = (status: number, title: string, text: string) => {
      response.writeHead(status, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'close',
      });
      response.end(PAGE(title, text));
    };
    const url = new URL(request.url ?? '/', `http://${host}`);
    if (request.method !== 'GET' || url.pathname !== '/callback')
      return reply(404, 'Not found', 'Nothing here.');
    const state = url.searchParams.get('state') ?? '';
    if (done || !same(state, options.state))
      return reply(
        400,
        'Sign-in not accepted',
        'This sign-in response does not belong to the waiting svc login.',
      );
    const error = url.searchParams.get('error');
    if (error) {
      reply(400, 'Sign-in failed', 'Return to the terminal for details.');
      const description = url.searchParams.get('error_description');
      return finish({
        error: new CliError(
          'authentication',
          error,
          `Sign-in failed: ${error}${description ? `: ${description}` : ''}`,
        ),
      });
    }
    const received = url.searchParams.get('code');
    if (!received) return reply(400, 'Sign-in failed', 'The response carried no code.');
    reply(200, 'Signed in', 'You are signed in to svc. You can close this tab and return to the terminal.');
    finish({ code: received });
  });
  const timer = setTimeout(
    () =>
      finish({
        error: new CliError(
          'authentication',
          'signin_timeout',
          `No sign-in within ${Math.round(options.timeoutMs / 1000)} s.`,
        ),
      }),
    options.timeoutMs,
  );
  timer.unref?.();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    redirectUri: `http://${hostPart}:${port}/callback`,
    code,
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(timer);
        finish({ error: new CliError('error', 'closed', 'The sign-in listener was closed.') });
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
