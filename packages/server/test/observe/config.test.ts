// The operations settings of src/platform/server-config.ts: logging, metrics, shutdown; the span batch's bounds.
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/compose/config.js';
import { batchOptions } from '../../src/platform/observe/tracing.js';

test('defaults: info logs, no metrics listener, 30 s shutdown with a 5 s drain delay', () => {
  expect(loadConfig({})).toMatchObject({
    logLevel: 'info',
    metrics: undefined,
    shutdownTimeoutMs: 30_000,
    drainDelayMs: 5000,
  });
});

test.each([
  [{ LOG_LEVEL: 'DEBUG' }, { logLevel: 'debug' }],
  [{ LOG_LEVEL: 'silent' }, { logLevel: 'silent' }],
  [{ SVC_METRICS_PORT: '9464' }, { metrics: { host: '127.0.0.1', port: 9464 } }],
  [{ SVC_METRICS_PORT: '0', SVC_METRICS_HOST: '0.0.0.0' }, { metrics: { host: '0.0.0.0', port: 0 } }],
  // The drain delay never outlasts the shutdown.
  [{ SVC_SHUTDOWN_TIMEOUT_MS: '2000' }, { shutdownTimeoutMs: 2000, drainDelayMs: 2000 }],
  [{ SVC_DRAIN_DELAY_MS: '0' }, { drainDelayMs: 0 }],
])('%j', (env, expected) => {
  expect(loadConfig(env)).toMatchObject(expected);
});

test.each([
  [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent/],
  [{ SVC_METRICS_PORT: 'x' }, /^SVC_METRICS_PORT must be a whole number/],
  [{ SVC_SHUTDOWN_TIMEOUT_MS: '10' }, /^SVC_SHUTDOWN_TIMEOUT_MS must be between 1000 and 600000/],
  [
    { SVC_SHUTDOWN_TIMEOUT_MS: '5000', SVC_DRAIN_DELAY_MS: '6000' },
    /^SVC_DRAIN_DELAY_MS must be between 0 and 5000/,
  ],
])('refused: %j', (env, message) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(message);
});

describe('the span batch from the standard OTEL_BSP_* variables', () => {
  test('whole positive numbers are taken; anything else leaves the SDK default', () => {
    expect(
      batchOptions({
        OTEL_BSP_MAX_QUEUE_SIZE: '100000',
        OTEL_BSP_SCHEDULE_DELAY: '200',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'lots',
        OTEL_BSP_EXPORT_TIMEOUT: '-5',
      }),
    ).toEqual({ maxQueueSize: 100_000, scheduledDelayMillis: 200 });
    expect(batchOptions({})).toEqual({});
  });
});
