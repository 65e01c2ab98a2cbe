// #13 item 8: limits hold across replicas. With two server processes on one PostgreSQL database, a
// client gets the budget of one replica — for the API's principal policy, for anonymous calls counted
// by address, and for sign-in failures — not twice it. On PGlite (one process) the same budget holds
// in memory.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { signAssertion } from '../../src/identity/auth/assertion.js';
import type { KeyFile } from '../../src/identity/auth/keypair.js';
import { setLocalAccount } from '../../src/identity/signin/accounts.js';
import { openPostgres } from '../../src/platform/db/postgres.js';
import {
  type ClusterDatabase,
  createClusterDatabase,
  PUBLIC_BASE,
  type Replica,
  startReplica,
  stopReplica,
  tempDir,
} from '../cluster/processes.js';
import { describeEngines } from '../support/databases.js';
import { startHarness } from './support/harness.js';
import { postSignin, signinForm, tally } from './support/signin.js';

const QUOTA = 20;
const FAILURES = 5;
const ENV = {
  SVC_RATE_LIMITS: `principal=${QUOTA}/600`,
  SVC_SIGNIN_LIMITS: `address=100000/60,account=100000/900,failures=${FAILURES}/900`,
  SVC_SIGNIN_HASH_CONCURRENCY: '16',
};

/** `n` GET /me alternating between `urls`, and the statuses counted. */
async function spend(urls: string[], token: string, n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const response = await fetch(`${urls[i % urls.length]}/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await response.body?.cancel();
    counts[response.status] = (counts[response.status] ?? 0) + 1;
  }
  return counts;
}

describeEngines('limits hold across replicas', (engine) => {
  if (engine.name === 'pglite') {
    // PGlite's start-up and the bootstrap's scrypt run inside this test: seconds on a busy machine.
    test(`one process: ${QUOTA} requests of a principal pass, the rest get 429`, {
      timeout: 90_000,
    }, async () => {
      const h = await startHarness(await engine.open(), { env: ENV });
      try {
        const token = (await h.user()).token;
        const counts: Record<string, number> = {};
        for (let i = 0; i < 2 * QUOTA; i++) {
          const answer = await h.call('GET', '/v1/me', { token });
          counts[answer.status] = (counts[answer.status] ?? 0) + 1;
        }
        expect(counts).toEqual({ 200: QUOTA, 429: QUOTA });
      } finally {
        await h.close();
      }
    });
    return;
  }

  // Two real server processes (dist/main.js) on one fresh PostgreSQL database, on 127.0.0.1.
  let database: ClusterDatabase;
  let keys: ReturnType<typeof tempDir>;
  let replicas: Replica[] = [];
  let file: KeyFile;

  beforeAll(async () => {
    database = await createClusterDatabase(inject('postgres').url);
    keys = tempDir();
    const keyFile = join(keys.path, 'bootstrap-key.json');
    replicas.push(await startReplica('a', { databaseUrl: database.url, keyFile, env: ENV }));
    replicas.push(await startReplica('b', { databaseUrl: database.url, keyFile, env: ENV }));
    file = JSON.parse(readFileSync(keyFile, 'utf8')) as KeyFile;
  }, 90_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => stopReplica(replica)));
    replicas = [];
    await database?.drop();
    keys?.remove();
  });

  const exchange = async (replica: Replica) => {
    const assertion = await signAssertion(file, { tokenUrl: `${PUBLIC_BASE}/auth/token` });
    return fetch(`${replica.url}/auth/token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${assertion}` },
    });
  };

  test(`principal policy: ${QUOTA} requests across both replicas, as on one`, async () => {
    const first = await exchange(replicas[0] as Replica);
    expect(first.status).toBe(200);
    const token = ((await first.json()) as { token: { access_token: string } }).token.access_token;
    const counts = await spend(
      replicas.map((r) => r.url),
      token,
      2 * QUOTA,
    );
    expect(counts).toEqual({ 200: QUOTA, 429: QUOTA });
  });

  test('anonymous token exchanges are counted by address across both replicas', async () => {
    // The exchange above already spent one request of 127.0.0.1's budget (counted by address).
    const statuses: number[] = [];
    for (let i = 0; i < 2 * QUOTA; i++) {
      const response = await exchange(replicas[i % 2] as Replica);
      await response.body?.cancel();
      statuses.push(response.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(QUOTA - 1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(QUOTA + 1);
  });

  test(`sign-in: 16 concurrent wrong passwords over both replicas get ${FAILURES} checks`, async () => {
    const email = 'cluster@example.com';
    const db = await openPostgres(database.url, { max: 1 });
    try {
      await setLocalAccount(db, { email, password: 'correct horse battery staple' });
    } finally {
      await db.close();
    }
    const origins = replicas.map((r) => new URL(r.url).origin);
    const publicOrigin = new URL(PUBLIC_BASE).origin;
    const forms = await Promise.all(
      origins.map((origin) => signinForm((request) => fetch(request), publicOrigin, origin)),
    );
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        postSignin(
          (request) => fetch(request),
          forms[i % 2] as (typeof forms)[0],
          {
            email,
            password: `wrong ${i}`,
          },
          { base: origins[i % 2] as string },
        ),
      ),
    );
    expect(await tally(answers)).toEqual({ 401: FAILURES, '429:signin-failures': 16 - FAILURES });
  });
});
