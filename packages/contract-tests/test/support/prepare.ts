// What a suite needs that an earlier suite would have made (a size and an image that runs, a workspace, a
// running computer, a closed terminal), made here when that suite did not run: so each suite of
// contract.test.ts can run alone (`CONTRACT_SUITES=terminals`). With every suite, the earlier ones have
// made everything and this makes nothing. What it makes it deletes at the end of the run.
import { paginate, unwrap, waitForOperations } from '@svc/client';
import { fx, key } from './fixtures.js';
import { contractClient, uniqueName } from './harness.js';

const WAIT = { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 };

export type Need = 'catalog' | 'workspace' | 'computer';

/** Workspaces this file made, deleted (with their computers) by {@link tidy}. */
const made: string[] = [];

/** Makes what `needs` names and no earlier suite made (a computer needs the catalogue and a workspace). */
export async function prepare(needs: readonly Need[]): Promise<void> {
  const client = contractClient();
  if (needs.length > 0 && (!fx.size || !fx.image)) {
    const { sizes } = await unwrap(client.GET('/sizes'));
    fx.size = sizes[0]?.name ?? '';
    for await (const image of paginate(client, '/images'))
      if (image.available) {
        fx.image = image.name;
        break;
      }
  }
  if ((needs.includes('workspace') || needs.includes('computer')) && !fx.workspace) {
    const { workspace } = await unwrap(
      client.POST('/workspaces', {
        params: { header: { 'Idempotency-Key': key() } },
        body: { name: uniqueName('alone') },
      }),
    );
    fx.workspace = workspace.id;
    made.push(workspace.id);
  }
  if (needs.includes('computer') && !fx.computer) {
    const created = await unwrap(
      client.POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: { name: uniqueName('box'), size: fx.size, image: fx.image },
      }),
    );
    fx.computer = created.computer.id;
    await waitForOperations(client, created.operations, WAIT);
  }
}

/** Deletes what {@link prepare} made: each workspace's computers, then the workspace. */
export async function tidy(): Promise<void> {
  const client = contractClient();
  for (const workspace of made.splice(0)) {
    const { computers } = await unwrap(
      client.GET('/workspaces/{workspace}/computers', { params: { path: { workspace } } }),
    );
    for (const computer of computers) {
      const gone = await client.DELETE('/workspaces/{workspace}/computers/{computer}', {
        params: { path: { workspace, computer: computer.id }, header: {} },
      });
      if (gone.data) await waitForOperations(client, gone.data.operations, WAIT);
    }
    await client.DELETE('/workspaces/{workspace}', { params: { path: { workspace }, header: {} } });
  }
}
