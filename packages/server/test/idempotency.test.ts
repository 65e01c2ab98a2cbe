import { beforeAll, describe, expect, test } from 'vitest';
import { createHttpCore } from '../src/http/pipeline.js';
import type { Database, Queryable } from '../src/platform/db/database.js';
import { ApiError } from '../src/platform/errors.js';
import type { IdempotencyScope, StoredResponse } from '../src/platform/idempotency.js';
import {
  canonicalJson,
  purgeExpiredIdempotencyKeys,
  requestFingerprint,
  runIdempotent,
} from '../src/platform/idempotency.js';
import { newId } from '../src/platform/ids.js';
import { document } from './http/fixtures.js';
import { describeEngines, describePostgres } from './support/databases.js';
import { createWorkspace } from './support/fixtures.js';

describe('the Idempotency-Key header, checked once by request validation', () => {
  // The handler sees the key validation let through; nothing after validation checks it again.
  const core = createHttpCore({
    document,
    handle: (ctx) => ctx.json(200, { key: ctx.input.headers['Idempotency-Key'] ?? null }),
  });
  const send = (method: string, path: string, key: string | null) =>
    core(
      new Request(`http://localhost${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(key === null ? {} : { 'idempotency-key': key }) },
        body: method === 'POST' ? '{"name":"acme"}' : '{"display_name":"Acme"}',
      }),
    );
  test.each([
    ['absent, optional', 'PATCH', null, 200, null],
    ['absent, required', 'POST', null, 400, 'idempotency_key_required'],
    ['a uuid', 'POST', '7d0f3c1e-8a3b-4d0a-9f6e-2b1c0d9e8f7a', 200, '7d0f3c1e-8a3b-4d0a-9f6e-2b1c0d9e8f7a'],
    ['one character', 'POST', 'k', 200, 'k'],
    ['255 characters', 'POST', 'k'.repeat(255), 200, 'k'.repeat(255)],
    ['256 characters', 'POST', 'k'.repeat(256), 400, 'invalid_argument'],
    ['empty', 'POST', '', 400, 'invalid_argument'],
    ['non-ASCII', 'POST', 'clé', 400, 'invalid_argument'],
    ['non-ASCII, optional', 'PATCH', 'clé', 400, 'invalid_argument'],
  ])('%s', async (_name, method, key, status, want) => {
    const path = method === 'POST' ? '/v1/workspaces' : '/v1/workspaces/acme';
    const response = await send(method, path, key);
    const body = (await response.json()) as { key?: string | null; error?: { code: string } };
    expect([response.status, status === 200 ? body.key : body.error?.code]).toEqual([status, want]);
  });
});

describe('requestFingerprint', () => {
  const base = {
    method: 'POST',
    path: '/v1/workspaces/acme/computers',
    query: 'a=1&b=2',
    body: { name: 'web-1', labels: { x: 'y', a: 'b' } },
  };
  test.each([
    ['same request', base, true],
    ['keys in another order', { ...base, body: { labels: { a: 'b', x: 'y' }, name: 'web-1' } }, true],
    ['query in another order', { ...base, query: 'b=2&a=1' }, true],
    ['lowercase method', { ...base, method: 'post' }, true],
    ['other body value', { ...base, body: { ...base.body, name: 'web-2' } }, false],
    ['other path', { ...base, path: '/v1/workspaces/other/computers' }, false],
    ['other query', { ...base, query: 'a=1&b=3' }, false],
    ['other method', { ...base, method: 'PATCH' }, false],
    ['no body', { ...base, body: undefined }, false],
  ])('%s → same fingerprint: %s', (_name, request, same) => {
    expect(requestFingerprint(request) === requestFingerprint(base)).toBe(same);
  });

  test('canonicalJson sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
});

/** An effect that creates one computer row, so effects can be counted. */
function createComputer(
  workspaceId: string,
  name: string,
  userId: string,
  response: StoredResponse = { status: 202, headers: { location: '/v1/operations/x' }, body: { name } },
) {
  return async (tx: Queryable): Promise<StoredResponse> => {
    await tx.query(
      `INSERT INTO computers (id, workspace_id, name, state, size, image, created_by) VALUES ($1, $2, $3, 'creating', 'small', 'ubuntu-2404', $4)`,
      [newId(), workspaceId, name, userId],
    );
    return response;
  };
}

async function count(db: Queryable, workspaceId: string, name: string): Promise<number> {
  return (
    await db.query('SELECT 1 FROM computers WHERE workspace_id = $1 AND name = $2', [workspaceId, name])
  ).rowCount;
}

async function outcome(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => value,
    (error: unknown) =>
      error instanceof ApiError
        ? { status: error.status, code: error.code, headers: error.headers }
        : Promise.reject(error),
  );
}

describeEngines('runIdempotent', (engine) => {
  let db: Database;
  let workspaceId: string;
  let userId: string;
  const scope = (key = newId(), fingerprint = 'f1'): IdempotencyScope => ({
    principalId: userId,
    key,
    fingerprint,
  });

  beforeAll(async () => {
    db = await engine.open();
    ({ workspaceId, userId } = await createWorkspace(db));
  });

  test('first request runs the effect; the same request again replays status, headers and body', async () => {
    const s = scope();
    const first = await runIdempotent(db, s, createComputer(workspaceId, 'a1', userId));
    expect(first).toEqual({
      status: 202,
      headers: { location: '/v1/operations/x' },
      body: { name: 'a1' },
      replayed: false,
    });
    const again = await runIdempotent(db, s, createComputer(workspaceId, 'a1', userId));
    expect(again).toEqual({ ...first, replayed: true });
    expect(await count(db, workspaceId, 'a1')).toBe(1);
  });

  test('same key, different request → 422 idempotency_key_reused, no effect', async () => {
    const s = scope();
    await runIdempotent(db, s, createComputer(workspaceId, 'b1', userId));
    expect(
      await outcome(
        runIdempotent(db, { ...s, fingerprint: 'f2' }, createComputer(workspaceId, 'b2', userId)),
      ),
    ).toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
    });
    expect(await count(db, workspaceId, 'b2')).toBe(0);
  });

  test('keys are scoped to the principal', async () => {
    const s = scope();
    await runIdempotent(db, s, createComputer(workspaceId, 'c1', userId));
    const other = await runIdempotent(
      db,
      { ...s, principalId: newId() },
      createComputer(workspaceId, 'c2', userId),
    );
    expect(other.replayed).toBe(false);
    expect(await count(db, workspaceId, 'c2')).toBe(1);
  });

  test('while the first is in flight → 409 idempotency_key_in_use with Retry-After, no effect', async () => {
    const s = scope();
    // Another replica's request holds the key (a live lock); PGlite cannot run two transactions at
    // once, so the marker is written directly. The PostgreSQL suite below races real requests.
    await db.query(
      `INSERT INTO idempotency_keys (principal_id, key, fingerprint, state, owner, locked_until) VALUES ($1, $2, $3, 'in_flight', 'other', now() + interval '1 minute')`,
      [s.principalId, s.key, s.fingerprint],
    );
    expect(await outcome(runIdempotent(db, s, createComputer(workspaceId, 'd1', userId)))).toEqual({
      status: 409,
      code: 'idempotency_key_in_use',
      headers: { 'retry-after': '1' },
    });
    expect(await count(db, workspaceId, 'd1')).toBe(0);
  });

  test.each([
    ['400 invalid_argument', new ApiError('invalid_argument', 'bad'), false],
    ['403 permission_denied', new ApiError('permission_denied', 'no'), false],
    ['429 rate_limited', new ApiError('rate_limited', 'slow down'), false],
    ['500 from a plain Error', new Error('boom'), false],
    ['404 not_found', new ApiError('not_found', 'gone'), true],
    ['409 already_exists', new ApiError('already_exists', 'taken'), true],
  ])('an effect failing with %s: rolled back; stored = %s', async (_name, error, isStored) => {
    const s = { ...scope(), requestId: 'req-1' };
    const name = `e${newId().slice(-8)}`;
    const failing = async (tx: Queryable) => {
      await createComputer(workspaceId, name, userId)(tx);
      throw error;
    };
    await expect(runIdempotent(db, s, failing)).rejects.toBe(error);
    expect(await count(db, workspaceId, name)).toBe(0);
    const retry = await runIdempotent(db, s, createComputer(workspaceId, name, userId));
    if (isStored) {
      const apiError = error as ApiError;
      expect(retry).toEqual({
        status: apiError.status,
        headers: {},
        body: { error: { code: apiError.code, message: apiError.message, details: {}, request_id: 'req-1' } },
        replayed: true,
      });
      expect(await count(db, workspaceId, name)).toBe(0);
    } else {
      expect(retry.replayed).toBe(false);
      expect(await count(db, workspaceId, name)).toBe(1);
    }
  });

  test('a record older than 24 h is forgotten: the key runs again', async () => {
    const s = scope();
    await runIdempotent(db, s, createComputer(workspaceId, 'f1', userId));
    await db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1`, [
      s.key,
    ]);
    await db.query(
      `UPDATE computers SET deleted_at = now(), state = 'deleted' WHERE workspace_id = $1 AND name = 'f1'`,
      [workspaceId],
    );
    expect((await runIdempotent(db, s, createComputer(workspaceId, 'f1', userId))).replayed).toBe(false);
    await db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1`, [
      s.key,
    ]);
    expect(await purgeExpiredIdempotencyKeys(db)).toBeGreaterThanOrEqual(1);
  });

  test('an in-flight record whose request died (lock expired) is taken over, and the dead request cannot commit', async () => {
    const s = scope();
    // Simulate a request that inserted its marker and died.
    await db.query(
      `INSERT INTO idempotency_keys (principal_id, key, fingerprint, state, owner, locked_until) VALUES ($1, $2, $3, 'in_flight', 'dead', now() - interval '1 second')`,
      [s.principalId, s.key, s.fingerprint],
    );
    const result = await runIdempotent(db, s, createComputer(workspaceId, 'g1', userId));
    expect(result.replayed).toBe(false);
    expect(await count(db, workspaceId, 'g1')).toBe(1);
  });

  test('without a key the effect just runs in a transaction', async () => {
    const result = await runIdempotent(db, undefined, createComputer(workspaceId, 'h1', userId));
    expect(result.replayed).toBe(false);
    await expect(
      runIdempotent(db, undefined, createComputer(workspaceId, 'h1', userId)),
    ).rejects.toMatchObject({ code: '23505' });
  });
});

describePostgres('runIdempotent across a real pool', (engine) => {
  test('20 parallel requests with one key, on two replicas: exactly one effect, every answer consistent', async () => {
    const a = await engine.open({ poolSize: 10 });
    const b = await engine.replica(a, { poolSize: 10 });
    const { workspaceId, userId } = await createWorkspace(a);
    const s: IdempotencyScope = { principalId: userId, key: newId(), fingerprint: 'same' };
    const effect = async (tx: Queryable) => {
      await new Promise((resolve) => setTimeout(resolve, 50)); // widen the race window
      return createComputer(workspaceId, 'race', userId)(tx);
    };
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => outcome(runIdempotent(i % 2 ? a : b, s, effect))),
    );
    expect(await count(a, workspaceId, 'race')).toBe(1);
    const executed = results.filter((r) => (r as { replayed?: boolean }).replayed === false);
    const others = results.filter((r) => (r as { replayed?: boolean }).replayed !== false);
    expect(executed).toHaveLength(1);
    for (const other of others) {
      expect([409, 202]).toContain((other as { status: number }).status);
      if ((other as { status: number }).status === 409)
        expect(other).toMatchObject({ code: 'idempotency_key_in_use' });
      else expect(other).toMatchObject({ replayed: true, body: { name: 'race' } });
    }
    // After the dust settles, the key replays.
    expect(await runIdempotent(a, s, effect)).toMatchObject({ status: 202, replayed: true });
    expect(await count(a, workspaceId, 'race')).toBe(1);
  });

  test('a request that outlives its lock loses the key and its effect rolls back', async () => {
    const db = await engine.open({ poolSize: 4 });
    const { workspaceId, userId } = await createWorkspace(db);
    const s: IdempotencyScope = { principalId: userId, key: newId(), fingerprint: 'same' };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = outcome(
      runIdempotent(db, s, async (tx) => {
        await createComputer(workspaceId, 'slow', userId)(tx);
        await gate;
        return { status: 202, body: { by: 'slow' } };
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await db.query(`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = $1`, [
      s.key,
    ]);
    const fast = await runIdempotent(db, s, async (tx) => {
      await createComputer(workspaceId, 'fast', userId)(tx);
      return { status: 202, body: { by: 'fast' } };
    });
    release();
    expect(fast).toMatchObject({ replayed: false, body: { by: 'fast' } });
    expect(await slow).toMatchObject({ status: 409, code: 'idempotency_key_in_use' });
    expect([await count(db, workspaceId, 'slow'), await count(db, workspaceId, 'fast')]).toEqual([0, 1]);
  });
});
