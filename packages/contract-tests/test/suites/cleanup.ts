import { unwrap, waitForOperations } from '@svc/client';
import { expect, it } from 'vitest';
import { fx } from '../support/fixtures.js';
import { contractClient, mockPrefer, statefulIt } from '../support/harness.js';

export function cleanupSuite(): void {
  const client = () => contractClient();

  it('deleteWorkspace with a live computer is 409 invalid_state', async () => {
    const { error, response } = await client().DELETE('/workspaces/{workspace}', {
      params: { path: { workspace: fx.workspace }, header: {} },
      headers: mockPrefer('code=409, example=workspace_not_empty'),
    });
    expect(response.status).toBe(409);
    expect(error?.error.code).toBe('invalid_state');
  });

  it('deleteComputer answers 202 with a computer.delete operation, which finishes', async () => {
    const { operations } = await unwrap(
      client().DELETE('/workspaces/{workspace}/computers/{computer}', {
        params: { path: { workspace: fx.workspace, computer: fx.computer }, header: {} },
      }),
    );
    expect(operations[0]!.type).toBe('computer.delete');
    const [done] = await waitForOperations(client(), operations, { timeoutMs: 60_000, minIntervalMs: 200 });
    expect(done!.state).toBe('succeeded');
  });

  statefulIt(
    'a deleted computer reads as state deleted and lists only with include_deleted=true',
    async () => {
      const path = { workspace: fx.workspace, computer: fx.computer };
      const { computer } = await unwrap(
        client().GET('/workspaces/{workspace}/computers/{computer}', { params: { path } }),
      );
      expect(computer.state).toBe('deleted');
      const ids = async (include_deleted: boolean) =>
        (
          await unwrap(
            client().GET('/workspaces/{workspace}/computers', {
              params: { path: fx, query: { include_deleted } },
            }),
          )
        ).computers.map((c) => c.id);
      expect(await ids(false)).not.toContain(fx.computer);
      expect(await ids(true)).toContain(fx.computer);
    },
  );

  it('the desktop (the screens suite made it, the streams suite watched it) is deleted', async () => {
    const { operations } = await unwrap(
      client().DELETE('/workspaces/{workspace}/computers/{computer}', {
        params: { path: { workspace: fx.workspace, computer: fx.desk }, header: {} },
      }),
    );
    await waitForOperations(client(), operations, { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 });
  });

  it('deleteKey, deleteMember, deleteServiceAccount answer 204', async () => {
    const sa = { workspace: fx.workspace, service_account: fx.serviceAccount };
    const deletions = [
      client().DELETE('/workspaces/{workspace}/service-accounts/{service_account}/keys/{key}', {
        params: { path: { ...sa, key: fx.key }, header: {} },
      }),
      client().DELETE('/workspaces/{workspace}/members/{member}', {
        params: { path: { workspace: fx.otherWorkspace, member: fx.member }, header: {} },
      }),
    ];
    for (const deletion of deletions) expect((await deletion).response.status).toBe(204);
    const { response } = await client().DELETE('/workspaces/{workspace}/service-accounts/{service_account}', {
      params: { path: sa, header: {} },
    });
    expect(response.status).toBe(204);
  });

  statefulIt('a deleted service account is 404 not_found', async () => {
    const { error, response } = await client().GET(
      '/workspaces/{workspace}/service-accounts/{service_account}',
      {
        params: { path: { workspace: fx.workspace, service_account: fx.serviceAccount } },
      },
    );
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe('not_found');
  });

  it('deleteWorkspace answers 204 once the workspace is empty', async () => {
    for (const workspace of [fx.otherWorkspace, fx.workspace]) {
      const { response } = await client().DELETE('/workspaces/{workspace}', {
        params: { path: { workspace }, header: {} },
      });
      expect(response.status).toBe(204);
    }
  });

  statefulIt('a deleted workspace is 404 not_found', async () => {
    const { error, response } = await client().GET('/workspaces/{workspace}', {
      params: { path: { workspace: fx.workspace } },
    });
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe('not_found');
  });
}
