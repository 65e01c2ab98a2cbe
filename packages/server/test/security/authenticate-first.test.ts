// Authentication before validation (SECURITY.md, #13 item 7): on every protected operation of the spec
// (its `security` is not `[]`), a caller without a usable credential gets 401 `unauthenticated` whatever
// is wrong with the rest of the request — body, content type, size, query, path, Idempotency-Key — and
// never a 400/413/415/422 that describes the schema. Generated from listOperations(spec).
import type { OperationInfo } from '@svc/contract';
import { isAnonymous, listOperations, loadDocument, securitySchemeNames } from '@svc/contract';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import { describeEngines } from '../support/databases.js';
import type { Harness } from './support/harness.js';
import { startHarness, TOKEN_URL } from './support/harness.js';

const document = loadDocument();

/** The schemes an operation accepts, read from the spec. */
const schemes = (op: OperationInfo): string[] => securitySchemeNames(document, op);

const protectedOps = listOperations(document).filter((op) => !isAnonymous(document, op));

/** What is wrong with the request besides its credential. */
interface Breakage {
  name: string;
  path?: (param: string) => string;
  query?: string;
  body?: string;
  contentType?: string;
}

const BREAKAGES: Breakage[] = [
  { name: 'schema-invalid body', body: '{"name":5,"role":[],"grant_type":{},"x_unknown":true}' },
  { name: 'broken JSON', body: '{"name":' },
  { name: 'wrong content type', body: 'name=x', contentType: 'text/plain' },
  { name: 'body over 1 MiB', body: `{"name":"${'a'.repeat(1024 * 1024 + 16)}"}` },
  { name: 'invalid query', query: 'limit=-1&cursor=%00&wait=soon&state=nope' },
  { name: 'invalid path', path: () => 'NOT an id!' },
  { name: 'malformed path encoding', path: () => '%E0%A4%A' },
];

/** Credentials that must not get past authentication; `access_token` ones only where it is the scheme. */
const CREDENTIALS: { name: string; header?: string; only?: string }[] = [
  { name: 'anonymous' },
  { name: 'not a Bearer credential', header: 'Basic Zm9vOmJhcg==' },
  { name: 'empty Bearer', header: 'Bearer ' },
  { name: 'garbage Bearer token', header: 'Bearer eyJhbGciOi.garbage.x' },
  { name: 'Bearer of the wrong kind (an id)', header: `Bearer ${'0'.repeat(27)}` },
  // Has the form of an assertion, so only an access-token route can refuse it before the body.
  { name: 'an assertion where an access token belongs', header: 'assertion', only: 'bearerAuth' },
];

const cases = protectedOps.flatMap((op) =>
  CREDENTIALS.filter((c) => !c.only || schemes(op).includes(c.only)).flatMap((credential) =>
    BREAKAGES.filter((b) => !b.path || op.path.includes('{')).map(
      (breakage) => [op.operationId, credential.name, breakage.name, op, credential, breakage] as const,
    ),
  ),
);

test('the spec has protected operations, and each is exercised', () => {
  expect(protectedOps.length).toBeGreaterThan(20);
  expect(new Set(cases.map(([id]) => id)).size).toBe(protectedOps.length);
});

describeEngines('authentication before validation', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(await engine.open());
  });
  afterAll(() => h.close());

  test.each(cases)('%s, %s, %s → 401', async (_id, _c, _b, op, credential, breakage) => {
    const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      breakage.path ? breakage.path(name) : h.workspace.id,
    );
    const url = `http://svc.test/v1${path}${breakage.query ? `?${breakage.query}` : ''}`;
    const headers = new Headers();
    if (credential.header === 'assertion')
      headers.set('authorization', `Bearer ${await signAssertion(h.ownerKeyFile, { tokenUrl: TOKEN_URL })}`);
    else if (credential.header !== undefined) headers.set('authorization', credential.header);
    const method = op.method.toUpperCase();
    const withBody = breakage.body !== undefined && method !== 'GET' && method !== 'HEAD';
    if (withBody) headers.set('content-type', breakage.contentType ?? 'application/json');
    // No Idempotency-Key: a required one missing is a validation error too.
    const response = await h.app.fetch(
      new Request(url, { method, headers, ...(withBody ? { body: breakage.body } : {}) }),
    );
    const body = (await response.json()) as { error?: { code?: string; details?: unknown } };
    expect([response.status, body.error?.code], JSON.stringify(body).slice(0, 300)).toEqual([
      401,
      'unauthenticated',
    ]);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(body.error?.details).toEqual({});
  });
});
