import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createClient as createBrowserClient } from '../src/index.js';
import { createClient as createNodeClient } from '../src/node.js';
import { createClient, NetworkError, parseRetryAfter, unwrap } from '../src/retrying.js';
import { BASE, errorBody, fakeFetch, json, recordingSleep } from './helpers.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const ok = () => json(200, { workspaces: [], next_cursor: null, has_more: false });
const busy = (headers: Record<string, string> = {}) => json(503, errorBody('unavailable'), headers);

function setup(answers: (() => Response)[], options: Parameters<typeof createClient>[0] = {}) {
  const server = fakeFetch((_r, _s, i) => (answers[i] ?? answers[answers.length - 1]!)());
  const { sleep, delays } = recordingSleep();
  const client = createClient({
    baseUrl: BASE,
    token: 't',
    fetch: server.fetch,
    sleep,
    now: () => NOW,
    random: () => 0.5,
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 },
    ...options,
  });
  return { server, client, delays };
}

describe('Retry-After', () => {
  it.each([
    [
      'delta-seconds on 429',
      [() => json(429, errorBody('rate_limited'), { 'Retry-After': '2' }), ok],
      [2000],
    ],
    ['delta-seconds on 503', [() => busy({ 'Retry-After': '7' }), ok], [7000]],
    ['an HTTP date', [() => busy({ 'Retry-After': new Date(NOW + 3000).toUTCString() }), ok], [3000]],
    [
      'a date in the past means now',
      [() => busy({ 'Retry-After': new Date(NOW - 5000).toUTCString() }), ok],
      [0],
    ],
    ['absent: full-jitter backoff', [busy, busy, ok], [50, 100]],
  ])('honours %s', async (_name, answers, wantDelays) => {
    const { client, server, delays } = setup(answers);
    const { response } = await client.GET('/workspaces');
    expect(response.status).toBe(200);
    expect(delays).toEqual(wantDelays);
    expect(server.seen).toHaveLength(wantDelays.length + 1);
  });

  it('gives up when Retry-After exceeds maxDelayMs and reports it on the error', async () => {
    const { client, server } = setup([() => json(429, errorBody('rate_limited'), { 'Retry-After': '60' })]);
    const err = await unwrap(client.GET('/workspaces')).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', retryAfterMs: 60_000 });
    expect(server.seen).toHaveLength(1);
  });

  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Wed, 01 Jan 2026 00:00:10 GMT', 10_000],
    ['soon', undefined],
    [null, undefined],
  ])('parseRetryAfter(%j) = %j', (value, want) => {
    expect(parseRetryAfter(value, NOW)).toBe(want);
  });
});

describe('which calls are retried', () => {
  it.each([
    ['GET on 503', 'GET', busy, {}, 3],
    ['GET on 429', 'GET', () => json(429, errorBody('rate_limited')), {}, 3],
    ['GET on 500: not transient', 'GET', () => json(500, errorBody('internal')), {}, 1],
    ['GET on 400', 'GET', () => json(400, errorBody('invalid_argument')), {}, 1],
    ['POST with a generated key on 503', 'POST', busy, {}, 3],
    ['POST with keys disabled on 503', 'POST', busy, { idempotencyKey: false as const }, 1],
    ['GET with retries disabled', 'GET', busy, { retry: false as const }, 1],
    [
      'POST on 409 idempotency_key_in_use',
      'POST',
      () => json(409, errorBody('idempotency_key_in_use')),
      {},
      3,
    ],
    ['POST on 409 already_exists', 'POST', () => json(409, errorBody('already_exists')), {}, 1],
  ])('%s', async (_name, method, answer, options, wantAttempts) => {
    const { client, server } = setup([answer], options);
    const { response } =
      method === 'GET'
        ? await client.GET('/workspaces')
        : await client.POST('/workspaces', { body: { name: 'dev' } });
    expect(response.ok).toBe(false);
    expect(server.seen).toHaveLength(wantAttempts);
  });

  it('resends the same body and Idempotency-Key on every attempt', async () => {
    const { client, server } = setup([busy, busy, () => json(201, { workspace: { id: 'w', name: 'dev' } })]);
    await unwrap(client.POST('/workspaces', { body: { name: 'dev' } }));
    const keys = server.seen.map((s) => s.headers.get('Idempotency-Key'));
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.seen.map((s) => s.body)).toEqual(Array(3).fill('{"name":"dev"}'));
  });

  it('keeps an Idempotency-Key the caller passed', async () => {
    const { client, server } = setup([busy, () => json(201, { workspace: {} })]);
    await client.POST('/workspaces', { body: { name: 'dev' }, headers: { 'Idempotency-Key': 'mine-1' } });
    expect(server.seen.map((s) => s.headers.get('Idempotency-Key'))).toEqual(['mine-1', 'mine-1']);
  });

  it.each([
    ['GET', false],
    ['POST', true],
    ['PATCH', true],
    ['DELETE', true],
  ])('%s carries an Idempotency-Key: %s', async (method, want) => {
    const { client, server } = setup([() => json(200, {})]);
    // Any path will do: the fake server answers all; the transport only looks at the method.
    const request = client.request as unknown as (method: string, path: string) => Promise<unknown>;
    await request(method.toLowerCase(), '/workspaces');
    expect(server.seen[0]!.headers.has('Idempotency-Key')).toBe(want);
  });

  it('gives each call its own key', async () => {
    const { client, server } = setup([() => json(201, {})]);
    await client.POST('/workspaces', { body: { name: 'a' } });
    await client.POST('/workspaces', { body: { name: 'b' } });
    expect(server.seen[0]!.headers.get('Idempotency-Key')).not.toBe(
      server.seen[1]!.headers.get('Idempotency-Key'),
    );
  });
});

describe('network errors', () => {
  const down = () => {
    throw new TypeError('fetch failed');
  };

  it('retries a GET and succeeds', async () => {
    const { client, server, delays } = setup([down, ok]);
    const { response } = await client.GET('/workspaces');
    expect(response.status).toBe(200);
    expect(server.seen).toHaveLength(2);
    expect(delays).toEqual([50]);
  });

  it.each([
    ['GET, after maxAttempts', { method: 'GET', options: {} }, 3],
    ['POST without a key, at once', { method: 'POST', options: { idempotencyKey: false as const } }, 1],
  ])('becomes NetworkError: %s', async (_name, { method, options }, wantAttempts) => {
    const { client, server } = setup([down], options);
    const call =
      method === 'GET' ? client.GET('/workspaces') : client.POST('/workspaces', { body: { name: 'x' } });
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ status: 0, code: 'network_error', attempts: wantAttempts });
    expect((err as NetworkError).cause).toBeInstanceOf(TypeError);
    expect(server.seen).toHaveLength(wantAttempts);
  });

  it('passes an abort through instead of retrying it', async () => {
    const controller = new AbortController();
    const server = fakeFetch(() => {
      controller.abort(new Error('user gave up'));
      throw new DOMException('aborted', 'AbortError');
    });
    const client = createClient({
      baseUrl: BASE,
      token: 't',
      fetch: server.fetch,
      sleep: recordingSleep().sleep,
    });
    await expect(client.GET('/workspaces', { signal: controller.signal })).rejects.toThrow('user gave up');
    expect(server.seen).toHaveLength(1);
  });

  it('still delivers the abort after a garbage collection', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const controller = new AbortController();
    let received: Request | undefined;
    const server = fakeFetch((request) => {
      received = request;
      return new Promise<Response>((_resolve, reject) => {
        request.signal.addEventListener('abort', () => reject(request.signal.reason));
      });
    });
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const call = client.GET('/workspaces', { signal: controller.signal }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
    controller.abort(new Error('cancelled'));
    expect(received?.signal.aborted).toBe(true);
    await expect(call).resolves.toMatchObject({ message: 'cancelled' });
  });
});

describe('which entry retries', () => {
  const down = () => {
    throw new TypeError('fetch failed');
  };

  it.each([
    ['GET on 503', 'GET', () => busy()],
    ['POST on 409 idempotency_key_in_use', 'POST', () => json(409, errorBody('idempotency_key_in_use'))],
  ])('@svc/client sends once: %s', async (_name, method, answer) => {
    const server = fakeFetch(answer);
    const client = createBrowserClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const { response } =
      method === 'GET'
        ? await client.GET('/workspaces')
        : await client.POST('/workspaces', { body: { name: 'dev' } });
    expect(response.ok).toBe(false);
    expect(server.seen).toHaveLength(1);
    // The key is still sent, so the caller can repeat the call safely.
    if (method === 'POST') expect(server.seen[0]!.headers.get('Idempotency-Key')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('@svc/client turns a network failure into NetworkError after one attempt', async () => {
    const server = fakeFetch(down);
    const client = createBrowserClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const err = await client.GET('/workspaces').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ status: 0, code: 'network_error', attempts: 1 });
    expect((err as NetworkError).cause).toBeInstanceOf(TypeError);
  });

  it('@svc/client passes an abort through', async () => {
    const controller = new AbortController();
    const server = fakeFetch(() => {
      controller.abort(new Error('user gave up'));
      throw new DOMException('aborted', 'AbortError');
    });
    const client = createBrowserClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    await expect(client.GET('/workspaces', { signal: controller.signal })).rejects.toThrow('user gave up');
  });

  it('@svc/client refuses a retry policy it would ignore, and accepts retry: false', () => {
    const options = { baseUrl: BASE, retry: { maxAttempts: 3 } };
    expect(() => createBrowserClient(options as never)).toThrow(/@svc\/client\/retry/);
    expect(() => createBrowserClient({ baseUrl: BASE, retry: false } as never)).not.toThrow();
  });

  it.each([
    ['@svc/client/retry', createClient],
    ['@svc/client/node', createNodeClient],
  ])('%s retries by default', async (_name, create) => {
    const server = fakeFetch((_r, _s, i) => (i === 0 ? busy() : ok()));
    const client = create({ baseUrl: BASE, token: 't', fetch: server.fetch, sleep: recordingSleep().sleep });
    const { response } = await client.GET('/workspaces');
    expect(response.status).toBe(200);
    expect(server.seen).toHaveLength(2);
  });
});
