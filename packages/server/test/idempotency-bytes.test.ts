import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, expect, test } from 'vitest';
import { IncomingBytes } from '../src/http/byte-body.js';
import { runIdempotentBytes } from '../src/http/idempotency-bytes.js';
import type { Database } from '../src/platform/db/database.js';
import { IdempotencyError } from '../src/platform/idempotency.js';
import { newId } from '../src/platform/ids.js';
import { describeEngines } from './support/databases.js';
import { createWorkspace } from './support/fixtures.js';

const bodyOf = (text: string) => new IncomingBytes(new Response(text).body, 1024);

// The rest of the byte-body idempotency is tested through HTTP (handlers/files-idempotency.test.ts);
// here, what needs a short lock: an upload that outlives its lock keeps its key.
describeEngines('runIdempotentBytes', (engine) => {
  let db: Database;
  let userId: string;
  beforeAll(async () => {
    db = await engine.open();
    ({ userId } = await createWorkspace(db));
  });

  test('an upload that runs longer than its lock keeps its key: a retry meanwhile is in use, not a second write', async () => {
    const scope = { principalId: userId, key: newId(), fingerprint: 'line' };
    const lock = { lockSeconds: 1, heartbeatMs: 200 };
    let writes = 0;
    const first = runIdempotentBytes(
      db,
      scope,
      bodyOf('same'),
      async () => {
        writes++;
        await sleep(2500);
        return { status: 200, body: { ok: true } };
      },
      lock,
    );
    await sleep(1800); // past the first lock: only its heartbeat holds the key now
    const retry = runIdempotentBytes(
      db,
      scope,
      bodyOf('same'),
      async () => {
        writes++;
        return { status: 200, body: { ok: true } };
      },
      lock,
    );
    await expect(retry).rejects.toBeInstanceOf(IdempotencyError);
    await expect(retry).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
    expect((await first).replayed).toBe(false);
    expect(writes).toBe(1);
    const replay = await runIdempotentBytes(db, scope, bodyOf('same'), async () => ({ status: 500 }), lock);
    expect(replay).toMatchObject({ status: 200, body: { ok: true }, replayed: true });
  });
});
