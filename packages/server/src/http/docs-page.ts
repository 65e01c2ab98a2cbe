import { readFile } from 'node:fs/promises';

/**
 * The rendered API reference: `pnpm spec:docs`'s one static page (Redoc, its script and the bundle
 * inlined, so it needs no network), copied into `dist/docs/` by the build (scripts/copy-assets.mjs).
 * Both this file's places lead there: `src/http/` under vitest, `dist/http/` when built.
 */
export const DOCS_PAGE = new URL(
  import.meta.url.includes('/dist/') ? '../docs/index.html' : '../../dist/docs/index.html',
  import.meta.url,
);

/** The paths the page answers: `/docs` itself and `/`, which points to it. */
export const DOCS_PATHS: readonly string[] = ['/', '/docs', '/docs/'];

/**
 * A handler for `GET`/`HEAD` of {@link DOCS_PATHS}: `/` redirects to `/docs` (302, with a line of HTML
 * for clients that do not follow), `/docs` is the page, read once and kept. A build without the page
 * answers 404 saying how to build it. `undefined` for any other request.
 *
 * @example
 * const docs = createDocsPage();
 * const answer = await docs(new Request('http://127.0.0.1:8080/docs')); // 200, text/html
 */
export function createDocsPage(page: URL = DOCS_PAGE): (request: Request) => Promise<Response | undefined> {
  let html: Promise<string | undefined> | undefined;
  const headers = {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
  };
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    const path = new URL(request.url).pathname;
    if (!DOCS_PATHS.includes(path)) return undefined;
    const body = (text: string) => (request.method === 'HEAD' ? null : text);
    if (path === '/')
      return new Response(body('<p>The API reference is at <a href="/docs">/docs</a>.</p>\n'), {
        status: 302,
        headers: { ...headers, location: '/docs' },
      });
    html ??= readFile(page, 'utf8').catch(() => undefined);
    const text = await html;
    if (text === undefined) {
      html = undefined; // a build may put it there later
      return new Response(
        body('The API reference is not built: run pnpm build (it runs pnpm spec:docs).\n'),
        {
          status: 404,
          headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' },
        },
      );
    }
    return new Response(body(text), { status: 200, headers });
  };
}
