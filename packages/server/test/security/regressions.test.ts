// Deterministic reproductions of what the fuzzer found, so each stays fixed once fixed.
import { loadDocument } from '@svc/contract';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeEngines } from '../support/databases.js';
import type { Harness } from './support/harness.js';
import { startHarness } from './support/harness.js';
import { specOracle } from './support/spec-oracle.js';

const oracle = specOracle(loadDocument());

describeEngines('fuzz regressions', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(await engine.open(), { start: false });
  });
  afterAll(() => h.close());

  // Found by the fuzzer (FUZZ_SEED=7, request #19193): the offending key is echoed into
  // `field_violations[].field`, which the spec bounds to 256 characters with no control characters.
  // The error then breaks the published envelope, and a client's huge key is reflected back whole.
  test.each([
    ['a label key of 300 characters', { labels: { ['a'.repeat(300)]: 'x' } }],
    ['a label key of 70 000 characters', { labels: { ['a'.repeat(70_000)]: 'x' } }],
    ['an unknown body field of 300 characters', { ['x'.repeat(300)]: 1 }],
    ['an unknown body field with a control character', { 'x\u0001y': 1 }],
    ['a label key with a control character', { labels: { 'a\u0000b': 'x' } }],
  ])('the 400 for %s stays within the spec’s FieldViolation', async (_name, extra) => {
    const answer = await h.call('POST', `/v1/workspaces/${h.workspace.id}/computers`, {
      token: h.ownerToken,
      idempotencyKey: true,
      json: { name: 'regression', size: 'small', image: 'ubuntu-2404', ...extra },
    });
    expect(answer.status).toBe(400);
    expect((answer.body as { error: { code: string } }).error.code).toBe('invalid_argument');
    expect(oracle.validateError(answer.body), answer.text.slice(0, 300)).toEqual([]);
    expect(answer.text.length, 'the error does not reflect the whole oversized input').toBeLessThan(4096);
  });
});

// The outside review's reports, replayed exactly as sent (SECURITY.md §5).
describeEngines('review regressions', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(await engine.open(), { start: false });
  });
  afterAll(() => h.close());

  const owner = () => ({ token: h.ownerToken, idempotencyKey: true as const });
  const code = (body: unknown) => (body as { error?: { code?: string } } | undefined)?.error?.code;

  test('an admin of H cannot become owner of V through a key of an H service account that owns V', async () => {
    const admin = await h.user();
    const home = (
      (await h.expectCall(201, 'POST', '/v1/workspaces', { ...owner(), json: { name: `h-${Date.now()}` } }))
        .workspace as { id: string }
    ).id;
    await h.expectCall(201, 'POST', `/v1/workspaces/${home}/members`, {
      ...owner(),
      json: { principal_id: admin.id, role: 'admin' },
    });
    const sa = (
      (
        await h.expectCall(201, 'POST', `/v1/workspaces/${home}/service-accounts`, {
          ...owner(),
          json: { name: 'deployer', role: 'editor' },
        })
      ).service_account as { id: string }
    ).id;
    const victim = h.workspace.id;
    await h.expectCall(201, 'POST', `/v1/workspaces/${victim}/members`, {
      ...owner(),
      json: { principal_id: sa, role: 'owner' },
    });
    const minted = await h.call('POST', `/v1/workspaces/${home}/service-accounts/${sa}/keys`, {
      token: admin.token,
      idempotencyKey: true,
    });
    expect([minted.status, code(minted.body)], minted.text).toEqual([403, 'permission_denied']);
    expect(minted.text).not.toContain('-----BEGIN');
    expect(minted.text).not.toContain(victim);
    const { rows } = await h.db.query('SELECT 1 FROM keys WHERE principal_id = $1', [sa]);
    expect(rows).toEqual([]);
  });

  test('an assertion whose header typ is a number is 401, not 500', async () => {
    const [, payload, signature] = (await h.exchange(h.ownerKeyFile)).split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 1, kid: 'x' })).toString('base64url');
    const answer = await h.call('POST', '/v1/auth/token', { token: `${header}.${payload}.${signature}` });
    expect([answer.status, code(answer.body)], answer.text).toEqual([401, 'unauthenticated']);
  });

  test('a key expiring on a leap second is 400 with a field violation, not 500', async () => {
    const sa = (h.ownerKeyFile as { principal_id: string }).principal_id;
    const answer = await h.call('POST', `/v1/workspaces/${h.workspace.id}/service-accounts/${sa}/keys`, {
      ...owner(),
      json: { expires_at: '2030-12-31T23:59:60Z' },
    });
    expect([answer.status, code(answer.body)], answer.text).toEqual([400, 'invalid_argument']);
    expect(answer.text).toContain('expires_at');
  });

  test('an anonymous request with a bad body is 401, not a 400 describing the schema', async () => {
    const answer = await h.call('POST', `/v1/workspaces/${h.workspace.id}/computers`, {
      json: { name: 5, size: [] },
    });
    expect([answer.status, code(answer.body)], answer.text).toEqual([401, 'unauthenticated']);
    expect(answer.text).not.toContain('field_violations');
  });
});
