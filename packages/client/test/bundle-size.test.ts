// The browser bundle: an app that makes one call with a static token or a token callback bundles the
// built main entry (dist/, what the package ships) as an app's bundler would (esbuild, as Vite uses it:
// ESM, browser platform, tree-shaking, minified). Key-file auth and jose are behind `@svc/client/node`,
// the retry loop behind `@svc/client/retry`, and neither may leak into it. The limit is the issue's
// 4 KiB gzipped (openapi-fetch alone is 2.6).
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** The limit, in bytes of gzip output. */
const LIMIT_BYTES = 4 * 1024;
const ENTRY = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const RETRY_ENTRY = fileURLToPath(new URL('../dist/retrying.js', import.meta.url));
/** Only the retry loop names this code (the 409 it retries); the transport and unwrap do not. */
const RETRY_MARKER = /idempotency_key_in_use/;
const STREAMS_ENTRY = fileURLToPath(new URL('../dist/streams.js', import.meta.url));
/** Only the SSE parser of `@svc/client/streams` (eventsource-parser) names this error type. */
const STREAMS_MARKER = /max-buffer-size-exceeded/;
const WEBHOOKS_ENTRY = fileURLToPath(new URL('../dist/webhooks.js', import.meta.url));
/** Only the verifier of `@svc/client/webhooks` names this error. */
const WEBHOOKS_MARKER = /WebhookVerificationError/;
/** The limit of a receiver that only verifies: WebCrypto does the hashing, nothing else is bundled. */
const WEBHOOKS_LIMIT_BYTES = 1536;

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
  it.each(APPS)(
    'with a $name stays within 4 KiB and carries no jose and no retry loop',
    async ({ name, code }) => {
      const { text, gzipBytes } = await bundleApp(code);
      // Printed so BENCHMARKS.md can quote the figure of this run.
      console.log(
        `bundle-size ${name}: ${gzipBytes} B gzipped (${text.length} B minified); limit ${LIMIT_BYTES} B, ratio ${(gzipBytes / LIMIT_BYTES).toFixed(2)}`,
      );
      expect(gzipBytes).toBeLessThanOrEqual(LIMIT_BYTES);
      expect(text).not.toMatch(/SignJWT|importPKCS8|jwt-bearer/);
      expect(text).not.toMatch(RETRY_MARKER);
      expect(text).not.toMatch(STREAMS_MARKER);
      expect(text).not.toMatch(WEBHOOKS_MARKER);
    },
  );

  it('a receiver that verifies with the webhooks entry stays within 1.5 KiB, without the client', async () => {
    const { text, gzipBytes } =
      await bundleApp(`import { verifyWebhook } from ${JSON.stringify(WEBHOOKS_ENTRY)};
export const onRequest = async (request) =>
  verifyWebhook({ secrets: 'whsec_AA==', headers: request.headers, body: await request.text() });`);
    console.log(
      `bundle-size @svc/client/webhooks verifier: ${gzipBytes} B gzipped (${text.length} B minified)`,
    );
    expect(gzipBytes).toBeLessThanOrEqual(WEBHOOKS_LIMIT_BYTES);
    expect(text).toMatch(WEBHOOKS_MARKER);
    expect(text).not.toMatch(STREAMS_MARKER);
    expect(text).not.toMatch(/SignJWT|importPKCS8|jwt-bearer/);
  });

  it('the streams entry does carry the SSE parser (so the check above can fail), and no jose', async () => {
    const { text, gzipBytes } = await bundleApp(`import { createClient } from ${JSON.stringify(ENTRY)};
import { streamWorkspaceEvents } from ${JSON.stringify(STREAMS_ENTRY)};
const client = createClient({ baseUrl: 'https://api.example/v1', token: 'ey' });
for await (const e of streamWorkspaceEvents(client, 'dev')) console.log(e.event);`);
    console.log(
      `bundle-size static token, @svc/client/streams: ${gzipBytes} B gzipped (${text.length} B minified)`,
    );
    expect(text).toMatch(STREAMS_MARKER);
    expect(text).not.toMatch(/SignJWT|importPKCS8|jwt-bearer/);
  });

  it('the retry entry does carry the retry loop (so the check above can fail), and no jose', async () => {
    const { text, gzipBytes } = await bundleApp(
      APPS[0]!.code.replace(JSON.stringify(ENTRY), JSON.stringify(RETRY_ENTRY)),
    );
    console.log(
      `bundle-size static token, @svc/client/retry: ${gzipBytes} B gzipped (${text.length} B minified)`,
    );
    expect(text).toMatch(RETRY_MARKER);
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
