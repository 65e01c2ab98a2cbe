// Spec-driven fuzzing: for every operation of the bundled spec, valid and invalid requests derived
// from its JSON Schemas (support/schema-arbitrary.ts), sent to the app's fetch in-process as a real
// owner. Pass criteria, each asserted: no 5xx; every error in the published envelope with
// `request_id` = `Request-Id`; every 2xx valid against the spec (Ajv 2020 on the bundle); no request
// the generator knows is invalid answered 2xx. Seeded: FUZZ_SEED, FUZZ_RUNS, FUZZ_PG_RUNS.
import { loadDocument } from '@svc/contract';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import { newId } from '../../src/platform/ids.js';
import { describeEngines } from '../support/databases.js';
import type { Harness } from './support/harness.js';
import { BASE_URL, startHarness, TOKEN_URL } from './support/harness.js';
import { describeMutation, mutatedAccessToken, mutatedAssertion } from './support/jwt-mutations.js';
import type { FuzzRequest, PoolRef } from './support/requests.js';
import { requestArbitrary } from './support/requests.js';
import { specOracle } from './support/spec-oracle.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const RUNS = {
  pglite: Number(process.env.FUZZ_RUNS ?? 20_000),
  postgres: Number(process.env.FUZZ_PG_RUNS ?? 3_000),
};

const document = loadDocument();
const oracle = specOracle(document);

/** Live resources the fuzzer aims at, refreshed from what 2xx answers return. */
class Pools {
  private readonly pools = new Map<string, string[]>();
  constructor(private readonly protectedPrincipal: string) {}
  add(pool: string, value: unknown): void {
    if (typeof value !== 'string' || value === '') return;
    const list = this.pools.get(pool) ?? [];
    if (list.includes(value)) return;
    list.push(value);
    if (list.length > 200) list.shift();
    this.pools.set(pool, list);
  }
  pick(ref: PoolRef): string {
    const list = this.pools.get(ref.pool);
    // Nothing live yet: a well-formed id that names nothing.
    if (!list || list.length === 0) return '0'.repeat(27);
    return list[ref.index % list.length] as string;
  }
  /** Learns ids (and names) from a success body. */
  learn(body: unknown): void {
    if (!body || typeof body !== 'object') return;
    const record = body as Record<string, unknown>;
    const nouns: [string, string, boolean][] = [
      ['workspace', 'workspaces', true],
      ['computer', 'computers', true],
      ['member', 'members', false],
      ['service_account', 'service_accounts', true],
      ['key', 'keys', false],
      ['operation', 'operations', false],
    ];
    for (const [noun, plural, named] of nouns) {
      const items = [record[noun], ...((record[plural] as unknown[] | undefined) ?? [])];
      for (const item of items) {
        if (!item || typeof item !== 'object') continue;
        const { id, name, principal_id } = item as { id?: unknown; name?: unknown; principal_id?: unknown };
        // The fuzzing owner's own membership stays out of reach: demoting it would turn the rest of
        // the run into 403s (the last-owner rule only protects a sole owner).
        if (principal_id !== undefined && principal_id === this.protectedPrincipal) continue;
        this.add(noun, id);
        if (named) this.add(noun, name);
      }
    }
  }
}

interface Figures {
  requests: number;
  byClass: Record<string, number>;
  byOperation: Record<string, Record<string, number>>;
  knownInvalid: number;
  validated2xx: number;
  tags: Record<string, number>;
}

async function runFuzz(
  h: Harness,
  runs: number,
  seed: number,
): Promise<{ figures: Figures; failures: Map<string, { count: number; example: string }> }> {
  const pools = new Pools(h.ownerUserId);
  const ws = h.workspace;
  const owner = { token: h.ownerToken, idempotencyKey: true as const };
  pools.add('workspace', ws.id);
  pools.add('workspace', ws.name);
  for (let i = 0; i < 3; i += 1) {
    const scratch = await h.expectCall(201, 'POST', '/v1/workspaces', {
      ...owner,
      json: { name: `scratch-${newId().slice(-10)}` },
    });
    pools.add('scratch_workspace', (scratch.workspace as { id: string }).id);
    const computer = await h.expectCall(202, 'POST', `/v1/workspaces/${ws.id}/computers`, {
      ...owner,
      json: { name: `fuzz-${i}`, size: 'small', image: 'ubuntu-2404', labels: { team: 'fuzz' } },
    });
    pools.learn(computer);
    const sa = await h.expectCall(201, 'POST', `/v1/workspaces/${ws.id}/service-accounts`, {
      ...owner,
      json: { name: `fuzz-sa-${i}`, role: 'viewer' },
    });
    pools.learn(sa);
    const saId = (sa.service_account as { id: string }).id;
    pools.learn(
      await h.expectCall(201, 'POST', `/v1/workspaces/${ws.id}/service-accounts/${saId}/keys`, owner),
    );
    const user = await h.user();
    pools.learn(
      await h.expectCall(201, 'POST', `/v1/workspaces/${ws.id}/members`, {
        ...owner,
        json: { principal_id: user.id, role: 'viewer' },
      }),
    );
  }

  const arbitrary = fc.oneof(...oracle.operations.map((op) => requestArbitrary(op, oracle.resolve)));
  const generating = performance.now();
  const requests = fc.sample(arbitrary, { seed, numRuns: runs });
  console.log(
    `fuzz: generated ${runs} requests in ${((performance.now() - generating) / 1000).toFixed(1)} s`,
  );
  const figures: Figures = {
    requests: 0,
    byClass: {},
    byOperation: {},
    knownInvalid: 0,
    validated2xx: 0,
    tags: {},
  };
  // Grouped by what went wrong, per operation and status: the first example of each, and a count.
  const failures = new Map<string, { count: number; example: string }>();
  const fail = (
    index: number,
    request: FuzzRequest,
    url: string,
    status: number,
    why: string,
    text: string,
  ) => {
    const group = `${request.operationId} ${status}: ${why.slice(0, 120)}`;
    const seen = failures.get(group);
    if (seen) {
      seen.count += 1;
      return;
    }
    failures.set(group, {
      count: 1,
      example:
        `#${index} ${request.method} ${url.slice(0, 200)} → ${status}: ${why}\n` +
        `   invalid because: ${request.invalid.join('; ') || '(believed valid)'}; tags: ${request.tags.join(',')}\n` +
        (request.jwt ? `   jwt: ${describeMutation(request.jwt)}\n` : '') +
        `   headers: ${JSON.stringify(request.headers).slice(0, 200)}\n   answer: ${text.slice(0, 300)}`,
    });
  };

  for (const [index, request] of requests.entries()) {
    const op = oracle.operation(request.operationId);
    const path = op.info.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = request.pathParams[name] as string | PoolRef;
      return encodeSegment(typeof value === 'string' ? value : pools.pick(value));
    });
    const search = new URLSearchParams(request.query).toString();
    const url = `/v1${path}${search ? `?${search}` : ''}`;
    const headers = new Headers(request.headers);
    if (request.auth === 'owner') headers.set('authorization', `Bearer ${h.ownerToken}`);
    else if (request.auth === 'garbage') headers.set('authorization', 'Bearer eyJhbGciOi.garbage.x');
    else if (request.auth === 'assertion')
      headers.set('authorization', `Bearer ${await signAssertion(h.ownerKeyFile, { tokenUrl: TOKEN_URL })}`);
    else if (request.auth === 'mutated-assertion' && request.jwt)
      headers.set('authorization', `Bearer ${mutatedAssertion(h.ownerKeyFile, TOKEN_URL, request.jwt)}`);
    else if (request.auth === 'mutated-token' && request.jwt)
      headers.set(
        'authorization',
        `Bearer ${await mutatedAccessToken(await h.app.deps.serverKeys.signingKey(), BASE_URL, h.ownerUserId, request.jwt)}`,
      );
    let body: BodyInit | undefined;
    const sent = request.body;
    if (sent?.kind === 'json') body = JSON.stringify(sent.value);
    else if (sent?.kind === 'text') body = sent.text;
    else if (sent?.kind === 'bytes') body = new Uint8Array(sent.bytes);
    else if (sent?.kind === 'huge') body = `{"name":"${'a'.repeat(1024 * 1024)}"}`;
    if (request.method === 'GET' || request.method === 'HEAD') body = undefined;

    const response = await h.app.fetch(
      new Request(`http://svc.test${url}`, { method: request.method, headers, body }),
    );
    // An event stream does not end by itself: its status and headers are checked, then it is hung up on.
    const streamed = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
    if (streamed) await response.body?.cancel();
    const text = streamed ? '' : await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = Symbol('not json');
    }
    const status = response.status;
    const statusClass = `${String(status)[0]}xx`;
    figures.requests += 1;
    figures.byClass[statusClass] = (figures.byClass[statusClass] ?? 0) + 1;
    const perOp = figures.byOperation[request.operationId] ?? {};
    figures.byOperation[request.operationId] = perOp;
    perOp[status] = (perOp[status] ?? 0) + 1;
    for (const tag of request.tags) figures.tags[tag] = (figures.tags[tag] ?? 0) + 1;
    if (request.invalid.length > 0) figures.knownInvalid += 1;

    const requestId = response.headers.get('request-id');
    if (!requestId) fail(index, request, url, status, 'no Request-Id header', text);
    if (status >= 500) fail(index, request, url, status, '5xx', text);
    if (request.expect401 && status !== 401)
      fail(index, request, url, status, `credential ${request.auth} answered ${status}, not 401`, text);
    if (status >= 400) {
      const problems = oracle.validateError(parsed);
      if (problems.length > 0)
        fail(index, request, url, status, `error not in the envelope: ${problems.join('; ')}`, text);
      else if ((parsed as { error: { request_id: string } }).error.request_id !== requestId)
        fail(index, request, url, status, 'error.request_id differs from Request-Id', text);
    } else if (status >= 200 && status < 300) {
      if (request.invalid.length > 0)
        fail(index, request, url, status, 'KNOWN-INVALID request accepted', text);
      const problems = op.checkResponse(status, parsed, response.headers);
      if (problems.length > 0)
        fail(index, request, url, status, `2xx breaks the spec: ${problems.join('; ')}`, text);
      else figures.validated2xx += 1;
      pools.learn(parsed);
    }
  }
  return { figures, failures };
}

/** Percent-encodes a path segment; a lone surrogate (not encodable) is sent as U+FFFD, as a browser would. */
function encodeSegment(value: string): string {
  // Lone surrogates cannot be percent-encoded (URIError): replace them as String#toWellFormed would.
  return encodeURIComponent(
    value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
  );
}

function printFigures(engine: string, seed: number, figures: Figures, ms: number): void {
  const ops = Object.entries(figures.byOperation)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, statuses]) => {
      const total = Object.values(statuses).reduce((a, b) => a + b, 0);
      const spread = Object.entries(statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ');
      return `    ${id.padEnd(22)} ${String(total).padStart(5)}  ${spread}`;
    });
  console.log(
    [
      `fuzz [${engine}] seed=${seed} (FUZZ_SEED=${seed} to replay): ${figures.requests} requests in ${(ms / 1000).toFixed(1)} s`,
      `  by status class: ${JSON.stringify(figures.byClass)}`,
      `  known-invalid: ${figures.knownInvalid}; 2xx validated against the spec: ${figures.validated2xx}`,
      `  tags: ${JSON.stringify(figures.tags)}`,
      '  by operation:',
      ...ops,
    ].join('\n'),
  );
}

describeEngines('spec-driven fuzzing', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(await engine.open());
  });
  afterAll(() => h.close());

  const runs = RUNS[engine.name];
  test(`${runs} generated requests: no 5xx, envelopes, valid 2xx, no invalid input accepted`, async () => {
    const started = performance.now();
    const { figures, failures } = await runFuzz(h, runs, SEED);
    printFigures(engine.name, SEED, figures, performance.now() - started);
    expect(figures.requests).toBe(runs);
    // Every operation of the spec was exercised, and some of each answered 2xx overall.
    expect(Object.keys(figures.byOperation).sort()).toEqual(
      oracle.operations.map((o) => o.info.operationId).sort(),
    );
    expect(figures.byClass['2xx'] ?? 0).toBeGreaterThan(runs / 20);
    const report = [...failures].map(([group, { count, example }]) => `[${count}×] ${group}\n  ${example}`);
    expect(report, `seed ${SEED}, ${failures.size} kinds of failure:\n${report.join('\n')}`).toEqual([]);
  }, 900_000);

  test('every path answers a method it does not have with 405 method_not_allowed and Allow', async () => {
    const byPath = new Map<string, string[]>();
    for (const op of oracle.operations)
      byPath.set(op.info.path, [...(byPath.get(op.info.path) ?? []), op.info.method.toUpperCase()]);
    for (const [template, methods] of byPath) {
      const path = `/v1${template.replace(/\{[^}]+\}/g, '0'.repeat(27))}`;
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !methods.includes(m))) {
        const answer = await h.call(method, path, {
          token: h.ownerToken,
          ...(method === 'GET' ? {} : { json: {} }),
        });
        const code = (answer.body as { error?: { code?: string } }).error?.code;
        expect([answer.status, code], `${method} ${template}`).toEqual([405, 'method_not_allowed']);
        expect(answer.headers.get('allow')?.split(/,\s*/)).toEqual(expect.arrayContaining(methods));
      }
    }
  });

  test('unknown routes are 404 not_found in the envelope', async () => {
    for (const path of [
      '/v1/nope',
      '/v1/workspaces/a/b/c/d/e',
      '/v2/me',
      '/v1/me/',
      '/v1//me',
      '/v1/%2e%2e/me',
      '/v1/workspaces/%00',
    ]) {
      const answer = await h.call('GET', path, { token: h.ownerToken });
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.status, path).toBeLessThan(500);
      expect(oracle.validateError(answer.body), path).toEqual([]);
    }
  });
});
