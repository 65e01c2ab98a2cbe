import { ApiError, createClient, paginate, unwrap, waitForOperations } from '@svc/client';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMock, type SvcMock } from '../../src/msw/index.js';

const BASE = 'http://api.test/v1';
const ID = /^[0-9a-hjkmnp-tv-z]{27}$/;
let mock: SvcMock;
const server = setupServer();
const client = createClient({ baseUrl: BASE, token: 'any' });
const dev = { workspace: 'acme-dev' };

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
beforeEach(() => {
  mock = createMock({ baseUrl: BASE, stateful: { stepMs: 150 } });
  server.resetHandlers(...mock.handlers);
});
afterAll(() => server.close());

const computers = async (query: Record<string, unknown> = {}) =>
  (await unwrap(client.GET('/workspaces/{workspace}/computers', { params: { path: dev, query } }))).computers;

describe('the stateful mode', () => {
  it('starts from the spec’s list examples', async () => {
    expect((await unwrap(client.GET('/workspaces'))).workspaces.map((w) => w.name)).toEqual([
      'acme-prod',
      'acme-dev',
    ]);
    expect((await computers()).map((c) => c.name)).toEqual(['test-db-1', 'build-runner-1']);
    expect(
      (
        await unwrap(
          client.GET('/workspaces/{workspace}/computers', { params: { path: { workspace: 'acme-prod' } } }),
        )
      ).computers,
    ).toEqual([]);
  });

  it('creates a computer that moves creating → running, and deletes it: ids, envelopes, Location', async () => {
    const { data, response } = await client.POST('/workspaces/{workspace}/computers', {
      params: { path: dev },
      body: { name: 'box-1', size: 'small', image: 'debian-13', labels: { team: 'web' } },
    });
    expect(response.status).toBe(202);
    const computer = data!.computer;
    const [operation] = data!.operations;
    expect(computer).toMatchObject({
      name: 'box-1',
      size: 'small',
      image: 'debian-13',
      labels: { team: 'web' },
      state: 'creating',
      workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
    });
    expect(computer.id).toMatch(ID);
    expect(operation).toMatchObject({
      type: 'computer.create',
      state: 'pending',
      progress: 0,
      target: { type: 'computer', id: computer.id },
    });
    expect(response.headers.get('Location')).toBe(`/v1/operations/${operation!.id}`);
    expect(response.headers.get('Retry-After')).toBe('1');
    expect((await computers())[0]).toMatchObject({
      name: 'box-1',
      state: 'creating',
      current_operation_id: operation!.id,
    });

    const seen: string[] = [];
    const [done] = await waitForOperations(client, [operation!], {
      minIntervalMs: 0,
      onProgress: (op) => seen.push(op.state),
    });
    expect(done).toMatchObject({ state: 'succeeded', progress: 100 });
    expect(seen).toEqual(['succeeded']); // one long-poll held until the end
    const running = await unwrap(
      client.GET('/workspaces/{workspace}/computers/{computer}', {
        params: { path: { ...dev, computer: 'box-1' } },
      }),
    );
    expect(running.computer.state).toBe('running');
    expect(running.computer.current_operation_id).toBeUndefined();
    expect(running.computer.started_at).toBeDefined();

    const deleting = await unwrap(
      client.DELETE('/workspaces/{workspace}/computers/{computer}', {
        params: { path: { ...dev, computer: computer.id } },
      }),
    );
    expect(deleting.operations[0]).toMatchObject({ type: 'computer.delete', target: { id: computer.id } });
    mock.state!.settle();
    expect((await computers()).map((c) => c.name)).toEqual(['test-db-1', 'build-runner-1']);
    expect((await computers({ include_deleted: true })).find((c) => c.id === computer.id)?.state).toBe(
      'deleted',
    );
    const history = await unwrap(client.GET('/workspaces/{workspace}/operations', { params: { path: dev } }));
    expect(history.operations.slice(0, 2).map((o) => `${o.type} ${o.state}`)).toEqual([
      'computer.delete succeeded',
      'computer.create succeeded',
    ]);
  });

  it('answers like the server when an action does not fit the state (409 invalid_state, operation_in_progress)', async () => {
    const stop = (computer: string) =>
      unwrap(
        client.POST('/workspaces/{workspace}/computers/{computer}/stop', {
          params: { path: { ...dev, computer } },
        }),
      );
    const error = await stop('test-db-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 409,
      code: 'invalid_state',
      details: { current_state: 'stopped', allowed_from: ['running'] },
    });
    const { operations } = await stop('build-runner-1');
    await expect(stop('build-runner-1')).rejects.toMatchObject({
      status: 409,
      code: 'operation_in_progress',
      details: { operation_id: operations[0]!.id },
    });
    mock.state!.settle();
    const stopped = await unwrap(
      client.GET('/workspaces/{workspace}/computers/{computer}', {
        params: { path: { ...dev, computer: 'build-runner-1' } },
      }),
    );
    expect(stopped.computer).toMatchObject({ state: 'stopped' });
  });

  it('refuses a taken name (409 already_exists) and an unknown workspace (404 not_found)', async () => {
    const create = (workspace: string) =>
      unwrap(
        client.POST('/workspaces/{workspace}/computers', {
          params: { path: { workspace } },
          body: { name: 'test-db-1', size: 'small', image: 'debian-13' },
        }),
      );
    const refusal = (workspace: string) =>
      create(workspace).then(
        () => expect.unreachable(),
        (e: unknown) => e as ApiError,
      );
    const taken = await refusal('acme-dev');
    expect(taken).toMatchObject({ status: 409, code: 'already_exists' });
    const missing = await refusal('nowhere');
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    // `details` is an object, `{}` when there is nothing to add (ErrorBody), never null.
    expect([taken.details, missing.details]).toEqual([{}, {}]);
    // Each answer has its own request id, the same in the body and the header.
    expect(taken.requestId).toMatch(ID);
    expect(taken.requestId).not.toBe(missing.requestId);
  });

  it('pages newest first with limit and cursor until has_more is false', async () => {
    for (let i = 0; i < 5; i += 1)
      await unwrap(
        client.POST('/workspaces/{workspace}/computers', {
          params: { path: dev },
          body: { name: `n-${i}`, size: 'small', image: 'debian-13' },
        }),
      );
    const first = await unwrap(
      client.GET('/workspaces/{workspace}/computers', { params: { path: dev, query: { limit: 3 } } }),
    );
    expect(first.computers.map((c) => c.name)).toEqual(['n-4', 'n-3', 'n-2']);
    expect(first).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const names: string[] = [];
    for await (const c of paginate(client, '/workspaces/{workspace}/computers', {
      params: { path: dev, query: { limit: 3 } },
    }))
      names.push(c.name);
    expect(names).toEqual(['n-4', 'n-3', 'n-2', 'n-1', 'n-0', 'test-db-1', 'build-runner-1']);
  });

  it('updates and deletes plain resources; a workspace with live computers stays', async () => {
    const { workspace } = await unwrap(
      client.POST('/workspaces', { body: { name: 'team-x', display_name: 'Team X' } }),
    );
    expect(workspace).toMatchObject({ name: 'team-x', display_name: 'Team X' });
    const renamed = await unwrap(
      client.PATCH('/workspaces/{workspace}', {
        params: { path: { workspace: workspace.id } },
        body: { display_name: 'X' },
      }),
    );
    expect(renamed.workspace.display_name).toBe('X');
    expect(
      (await client.DELETE('/workspaces/{workspace}', { params: { path: { workspace: 'team-x' } } })).response
        .status,
    ).toBe(204);
    expect(
      (await client.GET('/workspaces/{workspace}', { params: { path: { workspace: 'team-x' } } })).response
        .status,
    ).toBe(404);
    await expect(
      unwrap(client.DELETE('/workspaces/{workspace}', { params: { path: dev } })),
    ).rejects.toMatchObject({ status: 409, code: 'invalid_state' });
  });
});
