import { Agent, request as httpRequest } from 'node:http';
import { afterAll, expect, test } from 'vitest';
import { listen, type RunningServer } from '../src/http/node-adapter.js';
import { drainAndStop, Lifecycle, notYetServing } from '../src/http/readiness.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close().catch(() => {})));
});

/** A keep-alive client: the server answers `Connection: keep-alive` unless it means to close. */
const agent = new Agent({ keepAlive: true });
afterAll(() => agent.destroy());

/** A GET through node:http, to read `Connection` (fetch hides it). */
function get(url: string): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('/ready: starting 503, ready 200, draining 503; once keep-alive ends answers close their connection', async () => {
  const lifecycle = new Lifecycle();
  const running = await listen(
    lifecycle.wrap(async () => new Response('ok')),
    { port: 0 },
  );
  servers.push(running);
  expect(await get(`${running.url}/ready`)).toMatchObject({ status: 503, body: '{"status":"starting"}' });
  lifecycle.markReady();
  expect(await get(`${running.url}/ready`)).toMatchObject({ status: 200, body: '{"status":"ready"}' });
  expect((await get(`${running.url}/v1/health`)).connection).toBe('keep-alive');
  // `/readiness` and `/ready/x` are not the probe.
  expect((await get(`${running.url}/ready/x`)).body).toBe('ok');
  lifecycle.beginDrain();
  lifecycle.markReady(); // too late: draining is final
  expect(await get(`${running.url}/ready`)).toMatchObject({ status: 503, body: '{"status":"draining"}' });
  running.endKeepAlive();
  expect(await get(`${running.url}/ready`)).toMatchObject({ status: 503, connection: 'close' });
  expect(await get(`${running.url}/v1/health`)).toMatchObject({ status: 200, connection: 'close' });
});

test('drainAndStop: drains, waits for the worker and the listener, and reports a cut at the deadline', async () => {
  const order: string[] = [];
  const lifecycle = new Lifecycle();
  lifecycle.markReady();
  const clean = await drainAndStop({
    lifecycle,
    drainDelayMs: 50,
    timeoutMs: 5000,
    endKeepAlive: () => order.push(`keep-alive ends (${lifecycle.phase})`),
    endStreams: () => order.push('streams end'),
    stopWorker: async () => {
      order.push(`worker (${lifecycle.phase})`);
    },
    closeListener: async () => {
      order.push('listener');
    },
    cutConnections: () => order.push('cut'),
    closeRest: async () => {
      order.push('rest');
    },
  });
  expect(clean).toBe(true);
  // Open event streams end at once, not after the drain delay: they would only wait for the deadline.
  expect(order).toEqual([
    'keep-alive ends (draining)',
    'streams end',
    'worker (draining)',
    'listener',
    'rest',
  ]);

  order.length = 0;
  let closeListener!: () => void;
  const forced = await drainAndStop({
    lifecycle: new Lifecycle(),
    drainDelayMs: 0,
    timeoutMs: 1000,
    endKeepAlive: () => {},
    stopWorker: async () => {},
    // A request that never ends: only the cut at the deadline closes the listener.
    closeListener: () =>
      new Promise<void>((resolve) => {
        closeListener = resolve;
      }),
    cutConnections: () => {
      order.push('cut');
      closeListener();
    },
    closeRest: async () => {
      order.push('rest');
    },
  });
  expect(forced).toBe(false);
  expect(order).toEqual(['cut', 'rest']);
});

test('a request before the app is built gets the published error envelope: 503 unavailable, Retry-After', async () => {
  const response = notYetServing(new Request('http://127.0.0.1/v1/me'));
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('1');
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(body.error).toMatchObject({ code: 'unavailable', details: {} });
  expect(body.error.request_id).toBe(response.headers.get('request-id'));
  expect(typeof body.error.message).toBe('string');
});
