// The outbound rules of SECURITY.md "Outbound calls", one attack each. Only loopback receivers started
// here are ever called; host names resolve through an injected resolver, never DNS.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  checkedAddress,
  postWebhook,
  RefusedAddressError,
  type Resolve,
  refusedRange,
  urlProblem,
} from '../../src/webhooks/outbound.js';

const names: Record<string, string[]> = {
  'public.example': ['93.184.215.14'],
  'private.example': ['10.1.2.3'],
  'mixed.example': ['93.184.215.14', '192.168.1.1'],
  'metadata.example': ['169.254.169.254'],
  'mapped.example': ['::ffff:10.0.0.1'],
  'ula.example': ['fd00::1'],
  'loop.example': ['127.0.0.1'],
};
/** Never DNS: a table; a name outside it does not resolve. */
const resolve: Resolve = async (host) => {
  const addresses = names[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('webhooks: refused address classes', () => {
  test.each([
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.0.10', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'rfc6052'],
  ])('%s is refused (%s)', (address, range) => {
    expect(refusedRange(address, false)).toBe(range);
  });

  test.each(['93.184.215.14', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946'])(
    '%s is allowed',
    (address) => {
      expect(refusedRange(address, false)).toBeUndefined();
    },
  );

  test('allowing loopback allows loopback only, never the other ranges', () => {
    expect(refusedRange('127.0.0.1', true)).toBeUndefined();
    expect(refusedRange('::1', true)).toBeUndefined();
    for (const address of ['10.0.0.1', '169.254.169.254', 'fd00::1', '100.64.0.1', '0.0.0.0'])
      expect(refusedRange(address, true)).toBeDefined();
  });
});

describe('webhooks: receiver URL checks', () => {
  const options = { resolve, allowLoopback: false };
  test.each([
    ['http://public.example/in', 'must use https'],
    ['ftp://public.example/in', 'must use https'],
    ['https://user:pw@public.example/in', 'must not carry credentials (user:password@)'],
    ['https://public.example/in#frag', 'must not have a fragment (#…)'],
    [
      'https://private.example/in',
      'its host private.example resolves to 10.1.2.3, a private address: receivers must be public',
    ],
    [
      'https://mixed.example/in',
      'its host mixed.example resolves to 192.168.1.1, a private address: receivers must be public',
    ],
    [
      'https://metadata.example/in',
      'its host metadata.example resolves to 169.254.169.254, a link-local address: receivers must be public',
    ],
    [
      'https://mapped.example/in',
      'its host mapped.example resolves to ::ffff:10.0.0.1, a private address: receivers must be public',
    ],
    [
      'https://ula.example/in',
      'its host ula.example resolves to fd00::1, a unique-local address: receivers must be public',
    ],
    [
      'https://10.0.0.1/in',
      'its host 10.0.0.1 resolves to 10.0.0.1, a private address: receivers must be public',
    ],
    ['https://[::1]/in', 'its host ::1 resolves to ::1, a loopback address: receivers must be public'],
    [
      'https://[::ffff:a9fe:a9fe]/in',
      'its host ::ffff:a9fe:a9fe resolves to ::ffff:a9fe:a9fe, a link-local address: receivers must be public',
    ],
    // Decimal, octal and hexadecimal forms are IPv4 addresses after URL parsing.
    [
      'https://2130706433/in',
      'its host 127.0.0.1 resolves to 127.0.0.1, a loopback address: receivers must be public',
    ],
    [
      'https://0177.0.0.1/in',
      'its host 127.0.0.1 resolves to 127.0.0.1, a loopback address: receivers must be public',
    ],
    [
      'https://0xa9fea9fe/in',
      'its host 169.254.169.254 resolves to 169.254.169.254, a link-local address: receivers must be public',
    ],
  ])('%s: %s', async (url, problem) => {
    expect(await urlProblem(url, options)).toBe(problem);
  });

  test('a public host, and one that does not resolve yet, are accepted', async () => {
    expect(await urlProblem('https://public.example/in', options)).toBeUndefined();
    expect(await urlProblem('https://unknown.example/in', options)).toBeUndefined();
  });

  test('http to loopback only when loopback is allowed', async () => {
    expect(await urlProblem('http://127.0.0.1:9/in', options)).toBe('must use https');
    const loopback = { resolve, allowLoopback: true };
    expect(await urlProblem('http://127.0.0.1:9/in', loopback)).toBeUndefined();
    expect(await urlProblem('http://loop.example:9/in', loopback)).toBeUndefined();
    expect(await urlProblem('http://private.example/in', loopback)).toMatch(/private address/);
    // Plain http to a host that does not resolve now is refused: it may never be loopback.
    expect(await urlProblem('http://unknown.example/in', loopback)).toBe(
      'uses http, which is only for a loopback receiver: use https',
    );
  });

  test('a resolver that never answers: accepted on create after 2 s, a connection_error at delivery', async () => {
    const never: Resolve = () => new Promise(() => {});
    const started = Date.now();
    expect(
      await urlProblem('https://slow.example/in', { resolve: never, allowLoopback: false }),
    ).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(
      await postWebhook(
        { url: 'https://slow.example/in', headers: {}, body: '{}' },
        { resolve: never, allowLoopback: false, connectTimeoutMs: 200 },
      ),
    ).toEqual({
      outcome: 'connection_error',
      error: 'could not resolve slow.example: resolving slow.example took more than 0.2 s',
    });
  });

  test('the address checked is the one connected to (no second lookup)', async () => {
    let lookups = 0;
    const counting: Resolve = async (host) => {
      lookups++;
      return resolve(host);
    };
    await expect(
      checkedAddress(new URL('https://public.example/'), { resolve: counting, allowLoopback: false }),
    ).resolves.toEqual({
      address: '93.184.215.14',
      family: 4,
    });
    expect(lookups).toBe(1);
    await expect(
      checkedAddress(new URL('https://mixed.example/'), { resolve, allowLoopback: false }),
    ).rejects.toBeInstanceOf(RefusedAddressError);
  });
});

describe('webhooks: outbound calls to loopback receivers', () => {
  let server: Server;
  let base: string;
  let hostsSeen: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      hostsSeen.push(request.headers.host ?? '');
      request.resume();
      if (request.url === '/ok') return response.writeHead(204).end();
      if (request.url === '/redirect')
        return response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
      if (request.url === '/slow') return; // never answers; the client's deadline ends it
      if (request.url === '/huge') {
        response.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const more = () => {
          while (sent < 1024 && response.write(chunk)) sent++;
          if (sent < 1024) response.once('drain', more);
          else response.end();
        };
        more();
        return;
      }
      response.writeHead(500).end('a body the service never stores');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });
  const options = { resolve, allowLoopback: true, timeoutMs: 1000, connectTimeoutMs: 500 };
  const post = (url: string, extra: Partial<typeof options> = {}) =>
    postWebhook({ url, headers: {}, body: '{}' }, { ...options, ...extra });

  test('a 2xx succeeds; the Host header is the URL host', async () => {
    hostsSeen = [];
    expect(await post(`${base}/ok`)).toEqual({ outcome: 'succeeded', statusCode: 204 });
    const port = (server.address() as AddressInfo).port;
    expect(hostsSeen).toEqual([`127.0.0.1:${port}`]);
  });

  test('a name resolving to loopback connects to the checked address, Host kept', async () => {
    hostsSeen = [];
    const port = (server.address() as AddressInfo).port;
    expect(await post(`http://loop.example:${port}/ok`)).toEqual({ outcome: 'succeeded', statusCode: 204 });
    expect(hostsSeen).toEqual([`loop.example:${port}`]);
  });

  test('a redirect (to a private address) is not followed: http_error', async () => {
    expect(await post(`${base}/redirect`)).toEqual({
      outcome: 'http_error',
      statusCode: 302,
      error: 'HTTP 302: redirects are not followed',
    });
  });

  test('a 5xx is an http_error without the answer body', async () => {
    const result = await post(`${base}/fail`);
    expect(result).toEqual({ outcome: 'http_error', statusCode: 500, error: 'HTTP 500' });
  });

  test('a receiver that never answers times out', async () => {
    const started = Date.now();
    expect(await post(`${base}/slow`)).toEqual({ outcome: 'timeout', error: 'no answer within 1 s' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test('a huge answer body is read to 64 KiB, then dropped', async () => {
    const started = Date.now();
    expect(await post(`${base}/huge`, { timeoutMs: 10_000 })).toEqual({
      outcome: 'succeeded',
      statusCode: 200,
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('a refused address is an attempt outcome, with no connection made', async () => {
    hostsSeen = [];
    expect(await post('http://private.example/in')).toEqual({
      outcome: 'refused_address',
      error: 'private.example resolves to 10.1.2.3, a private address, which webhooks never call',
    });
    expect(await post(`${base}/ok`, { allowLoopback: false })).toMatchObject({ outcome: 'refused_address' });
    expect(hostsSeen).toEqual([]);
  });

  test('a closed port is a connection_error', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    expect(await post(`http://127.0.0.1:${port}/`)).toMatchObject({ outcome: 'connection_error' });
  });
});
