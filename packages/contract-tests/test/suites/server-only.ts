import { unwrap, waitForOperations } from '@svc/client';
import { createClient } from '@svc/client/node';
import { expect } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, credentials, recordingFetch, statefulIt, uniqueName } from '../support/harness.js';
import { baseUrl } from '../support/target.js';

const WAIT = { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 };

/**
 * Tests that need a server that remembers: read-your-writes, transitions, replays, real cursors, and
 * answers Prism gives itself (it picks an operation's 422 for any invalid request, and answers unknown
 * routes with its own problem+json). Declared with statefulIt: reported, never silently dropped.
 */
export function serverOnlySuite(): void {
  const client = () => contractClient();
  const sa = () => ({ workspace: fx.workspace });

  statefulIt('a created computer reads back with the same id and name, and is listed', async () => {
    const name = uniqueName('readback');
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/computers', {
        params: { path: sa(), header: { 'Idempotency-Key': key() } },
        body: { name, size: fx.size, image: fx.image },
      }),
    );
    expect(created.computer.state).toBe('creating');
    const path = { workspace: fx.workspace, computer: name };
    const { computer } = await unwrap(
      client().GET('/workspaces/{workspace}/computers/{computer}', { params: { path } }),
    );
    expect(computer).toMatchObject({ id: created.computer.id, name });
    await waitForOperations(client(), created.operations, WAIT);
    const listed = await unwrap(
      client().GET('/workspaces/{workspace}/computers', { params: { path: sa() } }),
    );
    expect(listed.computers.map((c) => c.id)).toContain(created.computer.id);
    const { operations } = await unwrap(
      client().DELETE('/workspaces/{workspace}/computers/{computer}', { params: { path, header: {} } }),
    );
    await waitForOperations(client(), operations, WAIT);
  });

  statefulIt('stop takes a running computer to stopped; stop or exec then is 409 invalid_state', async () => {
    const path = { workspace: fx.workspace, computer: fx.computer };
    const get = async () =>
      (await unwrap(client().GET('/workspaces/{workspace}/computers/{computer}', { params: { path } })))
        .computer;
    expect((await get()).state).toBe('running');
    const stop = () =>
      client().POST('/workspaces/{workspace}/computers/{computer}/stop', { params: { path, header: {} } });
    const { operations } = await unwrap(stop());
    await waitForOperations(client(), operations, WAIT);
    expect((await get()).state).toBe('stopped');
    const again = await stop();
    expect(again.response.status).toBe(409);
    expect(again.error?.error).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'stopped', allowed_from: ['running'] },
    });
    const exec = await client().POST('/workspaces/{workspace}/computers/{computer}/exec', {
      params: { path, header: {} },
      body: { argv: ['true'] },
    });
    expect(exec.response.status).toBe(409);
    expect(exec.error?.error).toMatchObject({
      code: 'invalid_state',
      details: { current_state: 'stopped', allowed_from: ['running'] },
    });
    const started = await unwrap(
      client().POST('/workspaces/{workspace}/computers/{computer}/start', { params: { path, header: {} } }),
    );
    await waitForOperations(client(), started.operations, WAIT);
    expect((await get()).state).toBe('running');
  });

  statefulIt('PATCH labels replaces the whole map and reads back', async () => {
    const path = { workspace: fx.workspace, computer: fx.computer };
    await unwrap(
      client().PATCH('/workspaces/{workspace}/computers/{computer}', {
        params: { path, header: {} },
        body: { labels: { only: 'this' } },
      }),
    );
    const { computer } = await unwrap(
      client().GET('/workspaces/{workspace}/computers/{computer}', { params: { path } }),
    );
    expect(computer.labels).toEqual({ only: 'this' });
  });

  statefulIt(
    'a repeated create with the same Idempotency-Key replays the same body with Idempotent-Replayed',
    async () => {
      const idempotencyKey = key();
      const body = { name: uniqueName('replay'), role: 'viewer' as const };
      const send = () =>
        client().POST('/workspaces/{workspace}/service-accounts', {
          params: { path: sa(), header: { 'Idempotency-Key': idempotencyKey } },
          body,
        });
      const first = await send();
      const second = await send();
      expect(first.response.status).toBe(201);
      expect(first.response.headers.get('Idempotent-Replayed')).toBeNull();
      expect(second.response.status).toBe(201);
      expect(second.response.headers.get('Idempotent-Replayed')).toBe('true');
      expect(second.data).toEqual(first.data);
      const reused = await client().POST('/workspaces/{workspace}/service-accounts', {
        params: { path: sa(), header: { 'Idempotency-Key': idempotencyKey } },
        body: { ...body, name: uniqueName('other') },
      });
      expect(reused.response.status).toBe(422);
      expect(reused.error?.error.code).toBe('idempotency_key_reused');
    },
  );

  statefulIt('a create with a taken name is 409 already_exists', async () => {
    const { service_account } = await unwrap(
      client().GET('/workspaces/{workspace}/service-accounts/{service_account}', {
        params: { path: { workspace: fx.workspace, service_account: fx.serviceAccount } },
      }),
    );
    const { error, response } = await client().POST('/workspaces/{workspace}/service-accounts', {
      params: { path: sa(), header: { 'Idempotency-Key': key() } },
      body: { name: service_account.name, role: 'viewer' },
    });
    expect(response.status).toBe(409);
    expect(error?.error.code).toBe('already_exists');
  });

  statefulIt('paging with limit=1 follows real cursors to the end without repeats', async () => {
    for (let i = 0; i < 2; i++) {
      await unwrap(
        client().POST('/workspaces/{workspace}/service-accounts', {
          params: { path: sa(), header: { 'Idempotency-Key': key() } },
          body: { name: uniqueName('page'), role: 'viewer' },
        }),
      );
    }
    const all = await unwrap(
      client().GET('/workspaces/{workspace}/service-accounts', { params: { path: sa() } }),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const result = await unwrap(
        client().GET('/workspaces/{workspace}/service-accounts', {
          params: { path: sa(), query: { limit: 1, cursor } },
        }),
      );
      expect(result.service_accounts.length).toBeLessThanOrEqual(1);
      seen.push(...result.service_accounts.map((s) => s.id));
      if (!result.has_more) {
        expect(result.next_cursor).toBeNull();
        break;
      }
      cursor = result.next_cursor!;
    }
    expect(seen).toEqual(all.service_accounts.map((s) => s.id));
    expect(seen.length).toBeGreaterThanOrEqual(3);
  });

  statefulIt(
    'a create without Idempotency-Key is 400 idempotency_key_required (Prism answers 422)',
    async () => {
      const noKey = contractClient({ idempotencyKey: false });
      const { error, response } = await noKey.POST('/workspaces/{workspace}/service-accounts', {
        params: { path: sa(), header: {} as { 'Idempotency-Key': string } },
        body: { name: uniqueName('nokey'), role: 'viewer' },
      });
      expect(response.status).toBe(400);
      expect(error?.error.code).toBe('idempotency_key_required');
    },
  );

  statefulIt(
    'an invalid create body is 400 invalid_argument with field_violations (Prism answers 422)',
    async () => {
      const { error, response } = await client().POST('/workspaces/{workspace}/computers', {
        params: { path: sa(), header: { 'Idempotency-Key': key() } },
        body: { name: 'Not A DNS Label', size: fx.size, image: fx.image },
      });
      expect(response.status).toBe(400);
      expect(error?.error.code).toBe('invalid_argument');
      const details = error?.error.details as { field_violations?: { field: string }[] };
      expect(details.field_violations?.map((v) => v.field)).toContain('name');
    },
  );

  statefulIt(
    'an unknown route is 404 not_found and a wrong method 405 with Allow (Prism answers these itself)',
    async () => {
      const base = baseUrl();
      const raw = createClient({
        baseUrl: base,
        fetch: recordingFetch(base),
        retry: false,
        ...credentials(),
      });
      const call = raw as unknown as Record<
        'GET' | 'PUT',
        (path: string) => Promise<{ response: Response; error?: { error: { code: string } } }>
      >;
      const unknown = await call.GET('/no-such-route');
      expect(unknown.response.status).toBe(404);
      expect(unknown.error?.error.code).toBe('not_found');
      const wrong = await call.PUT('/me');
      expect(wrong.response.status).toBe(405);
      expect(wrong.error?.error.code).toBe('method_not_allowed');
      expect(wrong.response.headers.get('Allow')).toContain('GET');
    },
  );
}
