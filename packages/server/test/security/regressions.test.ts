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
