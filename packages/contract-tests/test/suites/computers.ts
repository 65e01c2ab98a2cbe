import { unwrap, waitForOperations } from '@svc/client';
import { expect, it } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, mockPrefer, statefulIt, uniqueName } from '../support/harness.js';

const WAIT = { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 };

export function computersSuite(): void {
  const client = () => contractClient();
  const at = () => ({ workspace: fx.workspace, computer: fx.computer });
  /** Deletes a computer a test made for itself, and waits: the workspace must be empty at cleanup. */
  const remove = async (path: { workspace: string; computer: string }) => {
    const { operations } = await unwrap(
      client().DELETE('/workspaces/{workspace}/computers/{computer}', { params: { path, header: {} } }),
    );
    await waitForOperations(client(), operations, WAIT);
  };

  it('createComputer answers 202 with the computer and its operation, which finishes', async () => {
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: { name: uniqueName('box'), size: fx.size, image: fx.image, labels: { suite: 'contract' } },
      }),
    );
    fx.computer = created.computer.id;
    fx.operation = created.operations[0]!.id;
    expect(created.operations[0]!.type).toBe('computer.create');
    const [done] = await waitForOperations(client(), created.operations, WAIT);
    expect(done!.state).toBe('succeeded');
  });

  it('listComputers filters by state', async () => {
    const { computers } = await unwrap(
      client().GET('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, query: { state: 'running', limit: 10 } },
        headers: mockPrefer('example=two_computers'),
      }),
    );
    expect(computers.length).toBeGreaterThan(0);
  });

  it('getComputer and updateComputer (labels)', async () => {
    const { computer } = await unwrap(
      client().GET('/workspaces/{workspace}/computers/{computer}', { params: { path: at() } }),
    );
    expect(computer.id).toMatch(/^[0-9a-hjkmnp-tv-z]{27}$/);
    const updated = await unwrap(
      client().PATCH('/workspaces/{workspace}/computers/{computer}', {
        params: { path: at(), header: {} },
        body: { labels: { suite: 'contract', round: 'two' } },
      }),
    );
    expect(updated.computer.labels).toBeTypeOf('object');
  });

  it('getComputer of an unknown computer is 404 not_found', async () => {
    const { error, response } = await client().GET('/workspaces/{workspace}/computers/{computer}', {
      params: { path: { workspace: fx.workspace, computer: uniqueName('no-such') } },
      headers: mockPrefer('code=404'),
    });
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe('not_found');
  });

  for (const action of ['restart', 'stop', 'start'] as const) {
    it(`${action}Computer answers 202 with a computer.${action} operation, which finishes`, async () => {
      const { operations } = await unwrap(
        client().POST(`/workspaces/{workspace}/computers/{computer}/${action}`, {
          params: { path: at(), header: {} },
        }),
      );
      expect(operations[0]!.type).toBe(`computer.${action}`);
      const [done] = await waitForOperations(client(), operations, WAIT);
      expect(done!.state).toBe('succeeded');
    });
  }

  it('recoverComputer of a computer that has not failed is 409 invalid_state, allowed from failed', async () => {
    const { error, response } = await client().POST('/workspaces/{workspace}/computers/{computer}/recover', {
      params: { path: at(), header: { 'Idempotency-Key': key() } },
      headers: mockPrefer('code=409'),
    });
    expect(response.status).toBe(409);
    expect(error?.error).toMatchObject({ code: 'invalid_state', details: { allowed_from: ['failed'] } });
  });

  it('recoverComputer brings a failed computer back: 202 with a computer.recover operation, which finishes', async () => {
    // The simulated driver fails this create (the `sim-fail` label); the mock ignores the label.
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: {
          name: uniqueName('failed'),
          size: fx.size,
          image: fx.image,
          labels: { 'sim-fail': 'create' },
        },
      }),
    );
    await waitForOperations(client(), created.operations, WAIT);
    const path = { workspace: fx.workspace, computer: created.computer.id };
    const { operations } = await unwrap(
      client().POST('/workspaces/{workspace}/computers/{computer}/recover', {
        params: { path, header: { 'Idempotency-Key': key() } },
      }),
    );
    expect(operations[0]!.type).toBe('computer.recover');
    expect(operations[0]).not.toHaveProperty('trigger');
    const [done] = await waitForOperations(client(), operations, WAIT);
    expect(done!.state).toBe('succeeded');
    const { computer } = await unwrap(
      client().GET('/workspaces/{workspace}/computers/{computer}', { params: { path } }),
    );
    expect(['running', 'stopped']).toContain(computer.state);
    await remove(path);
  });

  it('a computer created with a lifetime shows it; PATCH changes it and null clears it', async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: {
          name: uniqueName('timed'),
          size: fx.size,
          image: fx.image,
          lifetime: { idle_timeout_seconds: 1800, expires_at: expires, on_end: 'delete' },
        },
      }),
    );
    expect(created.computer.id).toMatch(/^[0-9a-hjkmnp-tv-z]{27}$/);
    await waitForOperations(client(), created.operations, WAIT);
    const path = { workspace: fx.workspace, computer: created.computer.id };
    const extended = await unwrap(
      client().PATCH('/workspaces/{workspace}/computers/{computer}', {
        params: { path, header: {} },
        body: { lifetime: { expires_at: new Date(Date.now() + 7_200_000).toISOString() } },
      }),
    );
    expect(extended.computer.id).toMatch(/^[0-9a-hjkmnp-tv-z]{27}$/);
    await unwrap(
      client().PATCH('/workspaces/{workspace}/computers/{computer}', {
        params: { path, header: {} },
        body: { lifetime: { idle_timeout_seconds: null, expires_at: null } },
      }),
    );
    await remove(path);
  });

  statefulIt('lifetimes read back: set on create, extended by PATCH, cleared by null', async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: {
          name: uniqueName('timed'),
          size: fx.size,
          image: fx.image,
          lifetime: { idle_timeout_seconds: 1800, expires_at: expires, on_end: 'delete' },
        },
      }),
    );
    expect(created.computer.lifetime).toMatchObject({
      idle_timeout_seconds: 1800,
      expires_at: expires,
      on_end: 'delete',
    });
    await waitForOperations(client(), created.operations, WAIT);
    const path = { workspace: fx.workspace, computer: created.computer.id };
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const extended = await unwrap(
      client().PATCH('/workspaces/{workspace}/computers/{computer}', {
        params: { path, header: {} },
        body: { lifetime: { expires_at: later } },
      }),
    );
    expect(extended.computer.lifetime).toMatchObject({ idle_timeout_seconds: 1800, expires_at: later });
    const cleared = await unwrap(
      client().PATCH('/workspaces/{workspace}/computers/{computer}', {
        params: { path, header: {} },
        body: { lifetime: { idle_timeout_seconds: null, expires_at: null } },
      }),
    );
    expect(cleared.computer.lifetime).toBeUndefined();
    const { error, response } = await client().PATCH('/workspaces/{workspace}/computers/{computer}', {
      params: { path, header: {} },
      body: { lifetime: { expires_at: new Date(Date.now() - 60_000).toISOString() } },
    });
    expect(response.status).toBe(400);
    expect(error?.error.details.field_violations?.[0]?.field).toBe('lifetime.expires_at');
    await remove(path);
  });

  it('getComputer with wait_for and wait answers 200 with the computer (the mock at once)', async () => {
    const { data, response } = await client().GET('/workspaces/{workspace}/computers/{computer}', {
      params: { path: at(), query: { wait_for: 'running,failed', wait: 5 } },
    });
    expect(response.status).toBe(200);
    expect(data?.computer.id).toMatch(/^[0-9a-hjkmnp-tv-z]{27}$/);
    const result = response.headers.get('wait-result');
    if (result !== null) expect(['reached', 'timed_out', 'unreachable']).toContain(result);
  });

  statefulIt('getComputer?wait_for: reached at once, timed_out after wait, 400 for no state', async () => {
    const reached = await client().GET('/workspaces/{workspace}/computers/{computer}', {
      params: { path: at(), query: { wait_for: 'running', wait: 30 } },
    });
    expect(reached.data?.computer.state).toBe('running');
    expect(reached.response.headers.get('wait-result')).toBe('reached');
    const timedOut = await client().GET('/workspaces/{workspace}/computers/{computer}', {
      params: { path: at(), query: { wait_for: 'stopped', wait: 1 } },
    });
    expect(timedOut.data?.computer.state).toBe('running');
    expect(timedOut.response.headers.get('wait-result')).toBe('timed_out');
    const { error, response } = await client().GET('/workspaces/{workspace}/computers/{computer}', {
      params: { path: at(), query: { wait_for: 'runing', wait: 1 } },
    });
    expect(response.status).toBe(400);
    expect(error?.error.code).toBe('invalid_argument');
  });

  it('execComputer runs a command in the running computer and answers 200 with its exit code and output', async () => {
    const { execution } = await unwrap(
      client().POST('/workspaces/{workspace}/computers/{computer}/exec', {
        params: { path: at(), header: { 'Idempotency-Key': key() } },
        body: { argv: ['uname', '-a'], timeout_seconds: 10 },
      }),
    );
    expect(execution.exit_code).toBe(0);
    expect(execution.timed_out).toBe(false);
    expect(execution.encoding).toBe('utf-8');
    expect(execution.stdout.length).toBeGreaterThan(0);
  });

  statefulIt(
    'execComputer passes argv and stdin through; an empty argv is 400 invalid_argument',
    async () => {
      const { execution } = await unwrap(
        client().POST('/workspaces/{workspace}/computers/{computer}/exec', {
          params: { path: at(), header: {} },
          body: { argv: ['cat'], stdin: 'from stdin\n' },
        }),
      );
      expect(execution).toMatchObject({ exit_code: 0, stdout: 'from stdin\n', stderr: '' });
      const echoed = await unwrap(
        client().POST('/workspaces/{workspace}/computers/{computer}/exec', {
          params: { path: at(), header: {} },
          body: { argv: ['echo', 'two', 'words'] },
        }),
      );
      expect(echoed.execution.stdout).toBe('two words\n');
      const { error, response } = await client().POST('/workspaces/{workspace}/computers/{computer}/exec', {
        params: { path: at(), header: {} },
        body: { argv: [] },
      });
      expect(response.status).toBe(400);
      expect(error?.error.code).toBe('invalid_argument');
    },
  );

  it('runComputer answers 202 with a computer.exec operation, which finishes', async () => {
    const { operations } = await unwrap(
      client().POST('/workspaces/{workspace}/computers/{computer}/run', {
        params: { path: at(), header: { 'Idempotency-Key': key() } },
        body: { argv: ['uname', '-a'], timeout_seconds: 600 },
      }),
    );
    expect(operations[0]!.type).toBe('computer.exec');
    fx.execOperation = operations[0]!.id;
    const [done] = await waitForOperations(client(), operations, WAIT);
    expect(done!.state).toBe('succeeded');
  });

  statefulIt(
    'runComputer: the finished operation carries the execution; a timeout above an hour is 400',
    async () => {
      const { operations } = await unwrap(
        client().POST('/workspaces/{workspace}/computers/{computer}/run', {
          params: { path: at(), header: {} },
          body: { argv: ['cat'], stdin: 'from stdin\n', timeout_seconds: 60 },
        }),
      );
      const [done] = await waitForOperations(client(), operations, WAIT);
      expect(done!.result?.execution).toMatchObject({ exit_code: 0, stdout: 'from stdin\n', stderr: '' });
      const { computer } = await unwrap(
        client().GET('/workspaces/{workspace}/computers/{computer}', { params: { path: at() } }),
      );
      expect(computer.state).toBe('running');
      const { error, response } = await client().POST('/workspaces/{workspace}/computers/{computer}/run', {
        params: { path: at(), header: {} },
        body: { argv: ['true'], timeout_seconds: 3601 },
      });
      expect(response.status).toBe(400);
      expect(error?.error.code).toBe('invalid_argument');
    },
  );

  it('startComputer of a running computer is 409 invalid_state with allowed_from', async () => {
    const { error, response } = await client().POST('/workspaces/{workspace}/computers/{computer}/start', {
      params: { path: at(), header: {} },
      headers: mockPrefer('code=409, example=start_invalid_state'),
    });
    expect(response.status).toBe(409);
    expect(error?.error.code).toBe('invalid_state');
    expect(error?.error.details).toMatchObject({ allowed_from: ['stopped', 'failed'] });
  });

  it('listOperations filters by target and getOperation long-polls', async () => {
    const { operations } = await unwrap(
      client().GET('/workspaces/{workspace}/operations', {
        params: { path: { workspace: fx.workspace }, query: { target_id: fx.computer } },
      }),
    );
    expect(operations.length).toBeGreaterThan(0);
    const { operation } = await unwrap(
      client().GET('/operations/{operation}', {
        params: { path: { operation: fx.operation }, query: { wait: 0 } },
      }),
    );
    expect(['pending', 'running', 'succeeded', 'failed', 'canceled']).toContain(operation.state);
  });
}
