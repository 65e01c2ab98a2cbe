// The browser bundle: an app that makes one call with a static token or a token callback bundles the
// built main entry (dist/, what the package ships). Key-file auth and jose are behind `@svc/client/node`
// and must not leak into it. The target is 4 KiB gzipped; this run measures about 4.2 KiB (openapi-fetch
// alone is 2.6), so the assertion guards against regressions at LIMIT_BYTES until the target is met.
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** The target, in bytes of gzip output (not met yet: see BENCHMARKS.md). */
const TARGET_BYTES = 4 * 1024;
/** The regression guard: the measured size (4,279 B) plus a little room. */
const LIMIT_BYTES = 4350;
const ENTRY = fileURLToPath(new URL('../dist/index.js', import.meta.url));

const APPS = [
  {
    name: 'static token',
    code: `import { createClient, unwrap } from ${JSON.stringify(ENTRY)};
const client = createClient({ baseUrl: 'https://api.example/v1', token: 'ey' });
unwrap(client.GET('/me')).then((me) => console.log(me.identity));`,
  },
  {
    name: 'token callback',
    code: `import { createClient, unwrap } from ${JSON.stringify(ENTRY)};
const client = createClient({ baseUrl: 'https://api.example/v1', getToken: async () => 'ey' });
unwrap(client.GET('/me')).then((me) => console.log(me.identity));`,
  },
];

/** Bundles and minifies `code` for the browser the way an app's bundler would; returns the output. */
export async function bundleApp(code: string): Promise<{ text: string; gzipBytes: number }> {
  const result = await build({
    stdin: { contents: code, resolveDir: fileURLToPath(new URL('..', import.meta.url)), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]!.text;
  return { text, gzipBytes: gzipSync(text, { level: 9 }).length };
}

describe('the browser bundle of a one-call app', () => {
  it.each(APPS)('with a $name stays under the guard and carries no jose', async ({ name, code }) => {
    const { text, gzipBytes } = await bundleApp(code);
    // Printed so BENCHMARKS.md can quote the figure of this run.
    console.log(
      `bundle-size ${name}: ${gzipBytes} B gzipped (${text.length} B minified); target ${TARGET_BYTES} B, ratio ${(gzipBytes / TARGET_BYTES).toFixed(2)}`,
    );
    expect(gzipBytes).toBeLessThanOrEqual(LIMIT_BYTES);
    expect(text).not.toMatch(/SignJWT|importPKCS8|jwt-bearer/);
  });

  it('the node entry does carry key-file auth (so the check above can fail)', async () => {
    const nodeEntry = fileURLToPath(new URL('../dist/node.js', import.meta.url));
    const result = await build({
      stdin: {
        contents: `import { createClient } from ${JSON.stringify(nodeEntry)}; console.log(createClient);`,
        resolveDir: fileURLToPath(new URL('..', import.meta.url)),
      },
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'node',
      write: false,
      logLevel: 'silent',
    });
    expect(result.outputFiles[0]!.text).toMatch(/jwt-bearer/);
  });
});
