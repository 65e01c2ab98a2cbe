// #13 item 2: the sign-in throttle counts and decides in one atomic step. Sixteen wrong passwords sent
// at once get exactly `failures` password checks (401), the rest 429 — on each engine, and on
// PostgreSQL across two replicas sharing one database.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { setLocalAccount } from '../../src/identity/signin/accounts.js';
import type { Database } from '../../src/platform/db/database.js';
import { cheapenPassword } from '../support/credentials.js';
import { describeEngines } from '../support/databases.js';
import type { Harness } from './support/harness.js';
import { BASE_URL, startHarness } from './support/harness.js';
import { fromAddress, postSignin, type SigninForm, signinForm, tally } from './support/signin.js';

const ORIGIN = new URL(BASE_URL).origin;
const PASSWORD = 'correct horse battery staple';
const FAILURES = 5;
// Every limit but the one under test out of reach; hashing is not capped here (it has its own test).
const ENV = {
  SVC_SIGNIN_LIMITS: `address=100000/60,account=100000/900,failures=${FAILURES}/900`,
  SVC_SIGNIN_HASH_CONCURRENCY: '16',
};

describeEngines('sign-in throttle is atomic', (engine) => {
  let db: Database;
  let h: Harness;
  let form: SigninForm;

  beforeAll(async () => {
    db = await engine.open();
    h = await startHarness(db, { env: ENV });
    form = await signinForm(fromAddress(h.app.fetch, '198.51.100.1'), ORIGIN);
  });
  afterAll(async () => {
    await h?.close();
  });

  test(`16 concurrent wrong passwords: exactly ${FAILURES} are checked (401), 11 get 429`, async () => {
    const email = 'burst@example.com';
    await setLocalAccount(db, { email, password: PASSWORD });
    await cheapenPassword(db, email, PASSWORD);
    const send = fromAddress(h.app.fetch, '198.51.100.1');
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => postSignin(send, form, { email, password: `wrong ${i}` })),
    );
    expect(await tally(answers)).toEqual({ 401: FAILURES, '429:signin-failures': 16 - FAILURES });
    // The right password is refused too until the window ends: the count was not a race.
    const right = await postSignin(send, form, { email, password: PASSWORD });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(800);
    const body = (await right.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      code: 'rate_limited',
      details: { policy: 'signin-failures', retry_after_seconds: expect.any(Number) },
      request_id: right.headers.get('request-id'),
    });
  });

  test('a browser gets the form again with 429 and Retry-After, never a redirect', async () => {
    const email = 'browser@example.com';
    await setLocalAccount(db, { email, password: PASSWORD });
    await cheapenPassword(db, email, PASSWORD);
    const send = fromAddress(h.app.fetch, '198.51.100.2');
    for (let i = 0; i < FAILURES; i++)
      expect((await postSignin(send, form, { email, password: 'wrong' }, { html: true })).status).toBe(401);
    const limited = await postSignin(send, form, { email, password: PASSWORD }, { html: true });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^text\/html/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('location')).toBeNull();
  });

  // Ten password checks in a row: scrypt at full cost, slow on a busy machine.
  test('a right password clears the count of its account and address', { timeout: 90_000 }, async () => {
    const email = 'clears@example.com';
    await setLocalAccount(db, { email, password: PASSWORD });
    await cheapenPassword(db, email, PASSWORD);
    const send = fromAddress(h.app.fetch, '198.51.100.3');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < FAILURES - 1; i++)
        expect((await postSignin(send, form, { email, password: 'wrong' })).status).toBe(401);
      expect((await postSignin(send, form, { email, password: PASSWORD })).status).toBe(303);
    }
  });

  if (engine.name === 'postgres') {
    test('two replicas on one database: 16 concurrent guesses split between them, still 5 checks', async () => {
      const other = await startHarnessReplica(await engine.replica(db));
      try {
        const email = 'replicas@example.com';
        await setLocalAccount(db, { email, password: PASSWORD });
        await cheapenPassword(db, email, PASSWORD);
        const sends = [h, other].map((r) => fromAddress(r.app.fetch, '198.51.100.4'));
        const answers = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            postSignin(sends[i % 2] as (typeof sends)[0], form, { email, password: `wrong ${i}` }),
          ),
        );
        expect(await tally(answers)).toEqual({ 401: FAILURES, '429:signin-failures': 16 - FAILURES });
      } finally {
        await other.app.close();
      }
    });
  }
});

/** A second app on the same PostgreSQL database (no bootstrap: the first replica did it). */
async function startHarnessReplica(db: Database): Promise<{ app: Harness['app'] }> {
  const { createApp } = await import('../../src/compose/app.js');
  const { loadConfig } = await import('../../src/compose/config.js');
  const config = loadConfig({ SVC_BASE_URL: BASE_URL, SVC_RATE_LIMITS: 'off', ...ENV }, { sandbox: true });
  return { app: await createApp({ config, db, responseValidation: 'off' }) };
}
