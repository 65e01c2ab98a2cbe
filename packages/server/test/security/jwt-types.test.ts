// Wrong JSON types inside every part of a JWT (SECURITY.md, #13 item 5): every registered header
// parameter and claim × every value of another JSON type, signed for real (so only the type checks can
// refuse it), as an assertion at POST /auth/token and as an access token on GET /me and on a write with
// an invalid body. Each must be 401 `unauthenticated` in the envelope, never a 500 or a success.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeEngines } from '../support/databases.js';
import type { Harness } from './support/harness.js';
import { BASE_URL, startHarness, TOKEN_URL } from './support/harness.js';
import type { JwtMutation } from './support/jwt-mutations.js';
import {
  allJwtMutations,
  describeMutation,
  mutatedAccessToken,
  mutatedAssertion,
} from './support/jwt-mutations.js';

const assertionMutations = allJwtMutations('assertion').map((m) => [describeMutation(m), m] as const);
const tokenMutations = allJwtMutations('access_token').map((m) => [describeMutation(m), m] as const);

test('covers every header parameter and claim with several wrong types', () => {
  expect(assertionMutations.length).toBeGreaterThan(200);
  expect(tokenMutations.length).toBeGreaterThan(assertionMutations.length);
});

describeEngines('wrong JSON types in JWTs', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(await engine.open());
  });
  afterAll(() => h.close());

  const expect401 = async (
    answer: { status: number; body: unknown; text: string; headers: Headers },
    what: string,
  ) => {
    const code = (answer.body as { error?: { code?: string } } | undefined)?.error?.code;
    expect([answer.status, code], `${what}: ${answer.text.slice(0, 300)}`).toEqual([401, 'unauthenticated']);
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
  };

  test.each(assertionMutations)('assertion with %s → 401', async (name, mutation: JwtMutation) => {
    const assertion = mutatedAssertion(h.ownerKeyFile, TOKEN_URL, mutation);
    await expect401(await h.call('POST', '/v1/auth/token', { token: assertion }), name);
  });

  test.each(tokenMutations)('access token with %s → 401', async (name, mutation: JwtMutation) => {
    const signer = await h.app.deps.serverKeys.signingKey();
    const token = await mutatedAccessToken(signer, BASE_URL, h.ownerUserId, mutation);
    await expect401(await h.call('GET', '/v1/me', { token }), `GET /me, ${name}`);
    await expect401(
      await h.call('POST', '/v1/workspaces', { token, json: { name: 5 } }),
      `POST /workspaces with an invalid body, ${name}`,
    );
  });

  test('the unmutated forms are accepted (the suite can tell)', async () => {
    const identity: JwtMutation = { part: 'claims', field: 'x_unused', value: 'ok' };
    const assertion = mutatedAssertion(h.ownerKeyFile, TOKEN_URL, identity);
    expect((await h.call('POST', '/v1/auth/token', { token: assertion })).status).toBe(200);
    const signer = await h.app.deps.serverKeys.signingKey();
    const token = await mutatedAccessToken(signer, BASE_URL, h.ownerUserId, identity);
    expect((await h.call('GET', '/v1/me', { token })).status).toBe(200);
  });
});
