import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type KeyFile, parseKeyFile, type SvcClient } from '@svc/client';
import { type NodeClientOptions as ClientOptions, createClient } from '@svc/client/node';
import { BYTE_MEDIA_TYPES } from '@svc/contract';
import { it } from 'vitest';
import { parseViolations, unexpectedViolations } from '../../src/server-target.js';
import { responseViolations } from '../../src/validate.js';
import { matchOperation } from './spec-index.js';
import { baseUrl, keyFilePath, onMock } from './target.js';

/** operationIds that answered 2xx during this run: the coverage test compares them with the spec. */
export const exercised = new Set<string>();
/**
 * operationIds whose only test was skipped for what the target refused (a setting of the server, not
 * a contract violation), with the reason the coverage test prints instead of failing on them.
 */
export const excused = new Map<string, string>();

/** Excuses an operation from the coverage test: its test is skipped, for this reason. */
export function excuse(operationId: string, reason: string): void {
  excused.set(operationId, reason);
}
/** Contract violations seen since the last {@link takeViolations}. */
let violations: string[] = [];

/** Returns and clears the violations recorded so far. */
export function takeViolations(): string[] {
  const taken = violations;
  violations = [];
  return taken;
}

/**
 * Cross-checks tie a header to the body of the same response. Prism answers headers and bodies from
 * separate examples, so on the mock they also check that the spec's examples agree with each other.
 * CONTRACT_CROSS_CHECKS=0 turns them off (to look at other failures first).
 */
export const crossChecks = process.env.CONTRACT_CROSS_CHECKS !== '0';

/**
 * The fetch every contract client sends through: it matches each request to its spec operation,
 * validates the response against the spec, and records 2xx answers as coverage.
 */
export function recordingFetch(base: string) {
  const basePath = new URL(base).pathname.replace(/\/+$/, '');
  return async (request: Request): Promise<Response> => {
    const response = await globalThis.fetch(request);
    const path = new URL(request.url).pathname.slice(basePath.length) || '/';
    const op = matchOperation(request.method, path);
    if (!op) return response;
    if ((response.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
      // A stream may stay open: its body is the caller's to read, event by event (support/streams.ts),
      // and the operation counts as covered once its events have been checked (`streamChecked`).
      for (const problem of responseViolations(op, response, undefined, { crossChecks })) {
        violations.push(`${op.operationId} ${request.method} ${path} -> ${response.status}: ${problem}`);
      }
      return response;
    }
    const type = (response.headers.get('Content-Type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if ((BYTE_MEDIA_TYPES as readonly string[]).includes(type)) {
      // Bytes (a download): the caller reads and compares them; their type and headers are checked here.
      for (const problem of responseViolations(op, response, undefined, { crossChecks })) {
        violations.push(`${op.operationId} ${request.method} ${path} -> ${response.status}: ${problem}`);
      }
      if (response.ok) exercised.add(op.operationId);
      return response;
    }
    const text = await response.clone().text();
    let body: unknown;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    for (const problem of responseViolations(op, response, body, { crossChecks })) {
      violations.push(`${op.operationId} ${request.method} ${path} -> ${response.status}: ${problem}`);
    }
    // Behind `prism proxy` (a server run): what Prism found wrong with this exchange, same rule as the run's end.
    const found = parseViolations(response.headers.get('sl-violations'));
    for (const v of unexpectedViolations(response.status, found)) {
      violations.push(
        `${op.operationId} ${request.method} ${path} -> ${response.status}: prism: ${v.location.join('.')} ${v.message}`,
      );
    }
    if (response.ok) exercised.add(op.operationId);
    return response;
  };
}

/**
 * Records a stream operation as covered: it answered 200 and every event read from it was checked
 * against the spec (support/streams.ts). A 200 alone does not cover a stream.
 */
export function streamChecked(operationId: string): void {
  exercised.add(operationId);
}

/** A throwaway Ed25519 key file: enough for the mock, which accepts any assertion. */
export function mockKeyFile(base: string): KeyFile {
  const { privateKey } = generateKeyPairSync('ed25519');
  return parseKeyFile({
    type: 'service_account_key',
    key_id: '01m6k2hq7xk3m9qg8w5e4r2t1ya',
    principal_id: '01m6hxnz3nys41pjh1sacmtn86c',
    algorithm: 'EdDSA',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    base_url: base,
  });
}

/** Credentials of the target: any token for the mock; CONTRACT_KEY_FILE or CONTRACT_TOKEN for a server. */
export function credentials(): Pick<ClientOptions, 'token' | 'keyFile'> {
  if (onMock) return { token: 'mock-access-token' };
  const path = keyFilePath();
  if (path) return { keyFile: parseKeyFile(JSON.parse(readFileSync(path, 'utf8'))) };
  if (process.env.CONTRACT_TOKEN) return { token: process.env.CONTRACT_TOKEN };
  throw new Error('CONTRACT_TARGET=server needs CONTRACT_KEY_FILE or CONTRACT_TOKEN');
}

/** A client of the target whose every response is validated. No retries: the contract is what answers first. */
export function contractClient(options: Partial<ClientOptions> = {}): SvcClient {
  const base = baseUrl();
  const auth = 'token' in options || 'keyFile' in options || 'getToken' in options ? {} : credentials();
  return createClient({ baseUrl: base, fetch: recordingFetch(base), retry: false, ...auth, ...options });
}

/**
 * `Prefer` headers that make Prism answer with a given example or status. Sent to the mock only: the
 * server must be brought to that answer for real by the same test.
 */
export function mockPrefer(prefer: string): Record<string, string> {
  return onMock ? { Prefer: prefer } : {};
}

/** Names of the stateful tests declared in this run (for the summary line). */
export const STATEFUL_PREFIX = '[stateful]';

/** Why a stateful test does not run against the mock: the reason its skip carries to the reports. */
export const NEEDS_A_SERVER = 'needs a stateful server: the mock answers examples, so it is listed, not run';

/**
 * Declares a test that needs a stateful server (read-your-writes, transitions, replays, real cursors).
 * Against the mock it skips itself with {@link NEEDS_A_SERVER}, so vitest counts it and the reports
 * list it with that reason; it is never dropped silently.
 */
export function statefulIt(
  name: string,
  fn: (context: { skip(note?: string): never }) => Promise<void>,
  timeout?: number,
): void {
  const title = `${STATEFUL_PREFIX} ${name}`;
  if (onMock) it(title, ({ skip }) => skip(NEEDS_A_SERVER));
  else it(title, (context) => fn(context as unknown as { skip(note?: string): never }), timeout);
}

/** A unique, valid resource name for this run. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
}
