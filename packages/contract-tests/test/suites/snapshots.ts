import { unwrap, waitForOperations } from '@svc/client';
import { expect, it } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, mockPrefer, statefulIt, uniqueName } from '../support/harness.js';

const WAIT = { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 };

/**
 * Snapshots (design §4.2): one of the suite's computer, listed and read; a computer created from it;
 * the refusals a server makes (image and snapshot together, a snapshot not found); deleted.
 */
export function snapshotsSuite(): void {
  const client = () => contractClient();
  const at = () => ({ workspace: fx.workspace, snapshot: fx.snapshot });

  it('createSnapshot answers 202 with the snapshot and a computer.snapshot operation, which finishes', async () => {
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/snapshots', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: { name: uniqueName('snap'), computer: fx.computer, description: 'contract suite' },
      }),
    );
    fx.snapshot = created.snapshot.id;
    expect(created.snapshot.id).toMatch(/^[0-9a-hjkmnp-tv-z]{27}$/);
    expect(created.operations[0]).toMatchObject({ type: 'computer.snapshot', target: { type: 'computer' } });
    const [done] = await waitForOperations(client(), created.operations, WAIT);
    expect(done!.state).toBe('succeeded');
  });

  it('listSnapshots and getSnapshot: the snapshot is ready', async () => {
    const { snapshots } = await unwrap(
      client().GET('/workspaces/{workspace}/snapshots', {
        params: { path: { workspace: fx.workspace }, query: { state: 'ready', limit: 10 } },
      }),
    );
    expect(snapshots.length).toBeGreaterThan(0);
    const { snapshot } = await unwrap(
      client().GET('/workspaces/{workspace}/snapshots/{snapshot}', { params: { path: at() } }),
    );
    expect(snapshot.state).toBe('ready');
  });

  it('getSnapshot of an unknown snapshot is 404 not_found', async () => {
    const { error, response } = await client().GET('/workspaces/{workspace}/snapshots/{snapshot}', {
      params: { path: { workspace: fx.workspace, snapshot: uniqueName('no-such') } },
      headers: mockPrefer('code=404'),
    });
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe('not_found');
  });

  it('createComputer from the snapshot: 202, the computer names it, the operation finishes', async () => {
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: { name: uniqueName('copy'), size: fx.size, snapshot: fx.snapshot },
      }),
    );
    const [done] = await waitForOperations(client(), created.operations, WAIT);
    expect(done!.state).toBe('succeeded');
    const path = { workspace: fx.workspace, computer: created.computer.id };
    const { operations } = await unwrap(
      client().DELETE('/workspaces/{workspace}/computers/{computer}', { params: { path, header: {} } }),
    );
    await waitForOperations(client(), operations, WAIT);
  });

  statefulIt('createComputer with both image and snapshot, or neither, is 400 invalid_argument', async () => {
    for (const body of [
      { name: uniqueName('both'), size: fx.size, image: fx.image, snapshot: fx.snapshot },
      { name: uniqueName('none'), size: fx.size },
    ]) {
      const { error, response } = await client().POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body,
      });
      expect(response.status).toBe(400);
      expect(error?.error.code).toBe('invalid_argument');
    }
  });

  it('deleteSnapshot answers 204; the snapshot is gone', async () => {
    const { response } = await client().DELETE('/workspaces/{workspace}/snapshots/{snapshot}', {
      params: { path: at(), header: {} },
    });
    expect(response.status).toBe(204);
  });

  statefulIt('a deleted snapshot is 404, and no computer can be created from it', async () => {
    const { response } = await client().GET('/workspaces/{workspace}/snapshots/{snapshot}', {
      params: { path: at() },
    });
    expect(response.status).toBe(404);
    const created = await client().POST('/workspaces/{workspace}/computers', {
      params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
      body: { name: uniqueName('late'), size: fx.size, snapshot: fx.snapshot },
    });
    expect(created.response.status).toBe(400);
  });
}
