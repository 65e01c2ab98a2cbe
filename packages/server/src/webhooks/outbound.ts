import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

// Calls to receivers (SECURITY.md "Outbound calls"). The server resolves the receiver's host itself,
// refuses when ANY address is not a public unicast one (private, loopback, link-local with the
// metadata address 169.254.169.254, unique-local, unspecified, multicast, carrier-grade NAT,
// reserved, NAT64 and 6to4 forms, and IPv4-mapped IPv6 of all of these), then connects to the address
// it checked: the socket's lookup answers that address, so there is no second DNS answer to rebind
// to. The URL's host stays the Host header and the TLS server name. Redirects are not followed.

/** One address a host resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address (injected in tests, which never resolve real names). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (getaddrinfo: `/etc/hosts`, then DNS), every address. */
export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/** How outbound calls are made and bounded. */
export interface OutboundOptions {
  resolve: Resolve;
  /** `SVC_WEBHOOKS_ALLOW_LOOPBACK`: loopback receivers (development, tests); never the other ranges. */
  allowLoopback: boolean;
  /** Connecting (TCP and TLS), default 5 s. */
  connectTimeoutMs?: number;
  /** The whole attempt, default 15 s. */
  timeoutMs?: number;
  /** What is read of an answer's body before it is dropped, default 64 KiB. */
  maxResponseBytes?: number;
}

/** A host resolved to an address the server does not call. */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(`${host} resolves to ${address}, ${rangeInWords(range)} address, which webhooks never call`);
  }
}

/**
 * The ipaddr.js range of `address` when the server refuses to call it, `undefined` when it may: only
 * public unicast addresses (and loopback when `allowLoopback`). An IPv4-mapped IPv6 address is judged
 * as its IPv4 address.
 *
 * @example
 * refusedRange('10.0.0.1', false); // 'private'
 * refusedRange('::ffff:169.254.169.254', false); // 'linkLocal'
 * refusedRange('93.184.215.14', false); // undefined
 */
export function refusedRange(address: string, allowLoopback: boolean): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/%.*$/, ''));
  } catch {
    return 'invalid';
  }
  if (ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress()) ip = ip.toIPv4Address();
  const range = ip.range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && allowLoopback) return undefined;
  return range;
}

/** An ipaddr.js range name as a reader says it, with its article: `a link-local`, `an unspecified`. */
function rangeInWords(range: string): string {
  const words: Record<string, string> = {
    linkLocal: 'link-local',
    uniqueLocal: 'unique-local',
    carrierGradeNat: 'shared (carrier-grade NAT)',
    ipv4Mapped: 'IPv4-mapped',
    rfc6145: 'translated (RFC 6145)',
    rfc6052: 'translated (RFC 6052)',
    '6to4': '6to4',
    teredo: 'Teredo',
    'non-loopback (http)': 'non-loopback (plain http)',
  };
  const word = words[range] ?? range;
  return `${/^(?!uni)[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}

/**
 * Every address of the URL's host, checked; the first one, which the call connects to. Throws
 * {@link RefusedAddressError} when any is refused (a host with one private address among public ones
 * is refused: which one a later lookup would answer is not ours to choose).
 *
 * @example
 * const target = await checkedAddress(new URL('https://hooks.example.com/in'), options);
 */
export async function checkedAddress(
  url: URL,
  options: Pick<OutboundOptions, 'resolve' | 'allowLoopback'> & { resolveTimeoutMs?: number },
): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  const addresses: ResolvedAddress[] = literal
    ? [{ address: host, family: literal === 6 ? 6 : 4 }]
    : await withTimeout(options.resolve(host), options.resolveTimeoutMs ?? 5_000, `resolving ${host}`);
  const first = addresses[0];
  if (!first) throw new Error(`${host} resolves to no address`);
  for (const { address } of addresses) {
    const range = refusedRange(address, options.allowLoopback);
    if (range) throw new RefusedAddressError(host, address, range);
    // Plain http only to a loopback receiver (development): never over a network.
    if (url.protocol === 'http:' && refusedRange(address, false) !== 'loopback')
      throw new RefusedAddressError(host, address, 'non-loopback (http)');
  }
  return first;
}

/**
 * What is wrong with a receiver URL, for a create or an update (`400 invalid_argument` on `url`), or
 * `undefined`: the scheme (`https`; `http` only for loopback when allowed), credentials, a fragment,
 * and the addresses its host resolves to. A host that does not resolve now is accepted (its
 * deliveries fail `connection_error` until it does); one that resolves to a refused address is not.
 *
 * @example
 * await urlProblem('http://169.254.169.254/', options); // 'must use https'
 */
export async function urlProblem(
  text: string,
  options: Pick<OutboundOptions, 'resolve' | 'allowLoopback'>,
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowLoopback))
    return 'must use https';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@)';
  if (url.hash !== '' || text.includes('#')) return 'must not have a fragment (#…)';
  try {
    // A slow resolver must not hold the request's transaction: 2 s, then it counts as not resolving.
    await checkedAddress(url, { ...options, resolveTimeoutMs: 2_000 });
  } catch (error) {
    if (error instanceof RefusedAddressError)
      return `its host ${error.host} resolves to ${error.address}, ${rangeInWords(error.range)} address: receivers must be public`;
    // Plain http is for a loopback receiver only, known now: a host that does not resolve is refused.
    if (url.protocol === 'http:') return 'uses http, which is only for a loopback receiver: use https';
  }
  return undefined;
}

/** How an attempt ended (the spec's `WebhookAttempt.outcome`, with its status and error). */
export interface AttemptResult {
  outcome: 'succeeded' | 'http_error' | 'timeout' | 'connection_error' | 'refused_address';
  statusCode?: number;
  /** For people, at most 500 characters; never the receiver's answer body. */
  error?: string;
}

const cut = (text: string): string => (text.length > 500 ? `${text.slice(0, 499)}…` : text);

/**
 * POSTs `body` to `url` with `headers`, safely: the host's addresses checked first and the checked
 * one connected to; 5 s to connect, 15 s in all; at most 64 KiB of the answer read, then dropped;
 * a redirect is an `http_error`. Never throws.
 *
 * @example
 * const result = await postWebhook({ url, headers, body }, { resolve: systemResolve, allowLoopback: false });
 */
export async function postWebhook(
  request: { url: string; headers: Record<string, string>; body: string },
  options: OutboundOptions,
): Promise<AttemptResult> {
  const url = new URL(request.url);
  let target: ResolvedAddress;
  try {
    // Resolving counts against the 5 s to connect.
    target = await checkedAddress(url, { ...options, resolveTimeoutMs: options.connectTimeoutMs ?? 5_000 });
  } catch (error) {
    if (error instanceof RefusedAddressError)
      return { outcome: 'refused_address', error: cut(error.message) };
    return {
      outcome: 'connection_error',
      error: cut(`could not resolve ${url.hostname}: ${describe(error)}`),
    };
  }
  return send(url, target, request, options);
}

/** `promise`, or a rejection after `ms` saying what took too long. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? error);
}

function send(
  url: URL,
  target: ResolvedAddress,
  request: { headers: Record<string, string>; body: string },
  options: OutboundOptions,
): Promise<AttemptResult> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxBytes = options.maxResponseBytes ?? 64 * 1024;
  // The socket connects to the address checked above, whatever DNS would answer now.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [target]);
    else callback(null, target.address, target.family);
  };
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let status: number | undefined;
    const timers: NodeJS.Timeout[] = [];
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    const byStatus = (code: number): AttemptResult =>
      code >= 200 && code < 300
        ? { outcome: 'succeeded', statusCode: code }
        : {
            outcome: 'http_error',
            statusCode: code,
            error: code >= 300 && code < 400 ? `HTTP ${code}: redirects are not followed` : `HTTP ${code}`,
          };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers: {
        ...request.headers,
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': 'svc-webhooks/1',
      },
      agent: false,
      lookup: pinned,
    });
    timers.push(
      setTimeout(
        () =>
          finish(
            status === undefined
              ? { outcome: 'timeout', error: `no answer within ${timeoutMs / 1000} s` }
              : byStatus(status),
          ),
        timeoutMs,
      ),
    );
    req.on('socket', (socket) => {
      const connecting = setTimeout(
        () =>
          finish({
            outcome: 'connection_error',
            error: `could not connect within ${connectTimeoutMs / 1000} s`,
          }),
        connectTimeoutMs,
      );
      timers.push(connecting);
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connecting));
    });
    req.on('response', (response) => {
      status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough: the answer's body means nothing to the service, and an endless one must not hold it.
        if (read >= maxBytes) finish(byStatus(status ?? 0));
      });
      response.on('end', () => finish(byStatus(status ?? 0)));
      response.on('error', () => finish(byStatus(status ?? 0)));
    });
    req.on('error', (error) => {
      if (status !== undefined) finish(byStatus(status));
      else finish({ outcome: 'connection_error', error: cut(describe(error)) });
    });
    req.end(request.body);
  });
}
