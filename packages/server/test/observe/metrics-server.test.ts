import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { Metrics } from '../../src/compose/metrics.js';
import { serveMetrics } from '../../src/compose/metrics-server.js';

test('GET /metrics serves the Prometheus text format on its own listener; nothing else there', async () => {
  const metrics = new Metrics();
  metrics.observeRequest('getMe', 200, 0.003);
  const served = await serveMetrics(metrics, { host: '127.0.0.1', port: 0 });
  try {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const res = await fetch(served.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await res.text();
    expect(text).toContain('svc_http_requests_total{operation="getMe",status="200"} 1');
    expect(text).toContain(
      'svc_http_request_duration_seconds_bucket{le="0.005",operation="getMe",status="200"} 1',
    );
    expect(text).toContain('process_cpu_user_seconds_total');
    expect((await fetch(served.url.replace('/metrics', '/v1/me'))).status).toBe(404);
    expect((await fetch(served.url, { method: 'POST' })).status).toBe(405);
  } finally {
    await served.close();
  }
});

const TRACING = fileURLToPath(new URL('../../dist/platform/observe/tracing.js', import.meta.url));

/** Which OpenTelemetry modules a fresh process resolves while calling `startTracing({ env })`. */
function loadedWith(env: Record<string, string>): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ resolve(specifier, context, next) { seen.push(specifier); return next(specifier, context); } });
    const { startTracing } = await import(${JSON.stringify(TRACING)});
    const tracing = await startTracing({ env: ${JSON.stringify(env)} });
    await tracing?.shutdown();
    console.log(JSON.stringify(seen.filter((s) => s.includes('@opentelemetry'))));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as string[];
}

test.runIf(existsSync(TRACING))(
  'tracing off loads no OpenTelemetry module at all; on, it loads the SDK',
  () => {
    expect(loadedWith({})).toEqual([]);
    const on = loadedWith({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(on).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http']),
    );
  },
);
