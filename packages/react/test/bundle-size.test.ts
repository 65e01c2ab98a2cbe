// The browser bundle of a one-hook app, bundled from the built package (dist/, what ships) as an app's
// bundler would (esbuild, as Vite uses it: ESM, browser, tree-shaking, minified, production React).
// Printed for BENCHMARKS.md: the whole app, what @svc/react and @svc/client add to React + TanStack
// Query, the same app on openapi-react-query over @svc/client, and the `?mock` chunk (MSW + the spec).
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const dist = (entry: string) => JSON.stringify(fileURLToPath(new URL(`../dist/${entry}`, import.meta.url)));
const client = JSON.stringify(
  fileURLToPath(new URL('../node_modules/@svc/client/dist/index.js', import.meta.url)),
);

/** Renders one component that reads `GET /me`; `hook` is the only line that differs between apps. */
const app = (imports: string, hook: string) => `
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { createElement as h } from 'react';
${imports}
function Me() {
  ${hook}
  return h('p', null, data ? data.identity.principal.name : 'loading');
}
createRoot(document.getElementById('root')).render(h(QueryClientProvider, { client: new QueryClient() }, h(Me)));
void useQuery;
`;

const APPS = {
  'React + TanStack Query, fetch by hand': app(
    '',
    `const { data } = useQuery({ queryKey: ['me'], queryFn: () => fetch('/v1/me').then((r) => r.json()) });`,
  ),
  '@svc/react (createHooks over @svc/client)': app(
    `import { createClient } from ${client}; import { createHooks } from ${dist('index.js')};
const api = createHooks(createClient({ baseUrl: '/v1', token: 't' }));`,
    `const { data } = api.useQuery('/me');`,
  ),
  'openapi-react-query over @svc/client': app(
    `import { createClient } from ${client}; import createQueryClient from 'openapi-react-query';
const api = createQueryClient(createClient({ baseUrl: '/v1', token: 't' }));`,
    `const { data } = api.useQuery('get', '/me');`,
  ),
} as const;

/** Bundles `code` for the browser; returns its gzipped and minified sizes. */
async function bundle(code: string): Promise<{ text: string; gzipBytes: number }> {
  const result = await build({
    stdin: { contents: code, resolveDir: fileURLToPath(new URL('..', import.meta.url)), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]!.text;
  return { text, gzipBytes: gzipSync(text, { level: 9 }).length };
}

describe('the browser bundle of a one-hook app', () => {
  it('costs little over React + TanStack Query, and carries no MSW and no spec document', async () => {
    const sizes: Record<string, number> = {};
    for (const [name, code] of Object.entries(APPS)) {
      const { text, gzipBytes } = await bundle(code);
      sizes[name] = gzipBytes;
      console.log(`bundle-size ${name}: ${gzipBytes} B gzipped (${text.length} B minified)`);
      expect(text).not.toMatch(/mockServiceWorker|x-extensible-enum|SignJWT/);
    }
    const base = sizes['React + TanStack Query, fetch by hand']!;
    const kit = sizes['@svc/react (createHooks over @svc/client)']! - base;
    const orq = sizes['openapi-react-query over @svc/client']! - base;
    console.log(
      `bundle-size added to React + TanStack Query: @svc/react + @svc/client ${kit} B, openapi-react-query + @svc/client ${orq} B`,
    );
    // The client alone is about 3.9 kB gzipped (packages/client README); the hooks add about 2 kB to it.
    expect(kit).toBeLessThanOrEqual(7 * 1024);
  });

  it('the ?mock chunk: MSW handlers with the bundled spec (development and tests only)', async () => {
    const { text, gzipBytes } = await bundle(
      `import { createMock } from ${dist('msw/index.js')}; import { setupWorker } from 'msw/browser';
setupWorker(...createMock({ baseUrl: '/v1', stateful: true }).handlers).start();`,
    );
    console.log(
      `bundle-size @svc/react/msw + msw/browser + the spec: ${gzipBytes} B gzipped (${text.length} B minified)`,
    );
    expect(text).toMatch(/x-extensible-enum/); // the document is in it, so the check above can fail
  });
});
