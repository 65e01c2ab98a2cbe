// Snapshots through the typed client (design §4.2): the create is a long-running call like a computer's
// (an Idempotency-Key made for it, `waitForOperations` on its `computer.snapshot`), and a computer is
// created from a snapshot by naming it instead of an image. Typed by the spec: a wrong field does not
// compile.
import { describe, expect, it } from 'vitest';
import { createClient, type Operation, unwrap, waitForOperations } from '../src/index.js';
import { BASE, fakeFetch, json } from './helpers.js';

const operation = (state: string): Operation =>
  ({
    id: '01m6qa0v8fmx2c7ze4tqhg6ka1b',
    workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
    type: 'computer.snapshot',
    state,
    progress: state === 'succeeded' ? 100 : 0,
    target: { type: 'computer', id: '01m6cnenctgek8472bc9m7jfnzd' },
    created_by: '01m6b5cjm082dkpt9sxm0exnk3h',
    created_at: '2026-11-12T09:00:00Z',
    updated_at: '2026-11-12T09:00:00Z',
  }) as Operation;

const snapshot = {
  id: '01m6qa0v8d3r5k1tcx9jz2wy4hn',
  workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
  name: 'build-cache-1',
  state: 'creating',
  computer_id: '01m6cnenctgek8472bc9m7jfnzd',
  image: 'ubuntu-2404',
  operation_id: '01m6qa0v8fmx2c7ze4tqhg6ka1b',
  created_by: '01m6b5cjm082dkpt9sxm0exnk3h',
  created_at: '2026-11-12T09:00:00Z',
  updated_at: '2026-11-12T09:00:00Z',
};

describe('snapshots', () => {
  it('create sends an Idempotency-Key, answers the snapshot and its operation, which is waited for; a computer is created from it', async () => {
    const server = fakeFetch((request, seen) => {
      if (seen.path.endsWith('/snapshots') && request.method === 'POST')
        return json(202, { snapshot, operations: [operation('pending')] });
      if (seen.path.startsWith('/operations/')) return json(200, { operation: operation('succeeded') });
      if (seen.path.endsWith('/computers') && request.method === 'POST')
        return json(202, { computer: { id: 'c2' }, operations: [] });
      return json(404, {});
    });
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const created = await unwrap(
      client.POST('/workspaces/{workspace}/snapshots', {
        params: { path: { workspace: 'dev' } },
        body: { name: 'build-cache-1', computer: 'build-runner-1' },
      }),
    );
    expect(created.snapshot.state).toBe('creating');
    const [done] = await waitForOperations(client, created.operations, { minIntervalMs: 0 });
    expect(done).toMatchObject({ type: 'computer.snapshot', state: 'succeeded' });
    const [post] = server.on('/workspaces/dev/snapshots');
    expect(post?.headers.get('idempotency-key')).toBeTruthy();
    expect(JSON.parse(post?.body ?? '')).toEqual({ name: 'build-cache-1', computer: 'build-runner-1' });

    await unwrap(
      client.POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: 'dev' } },
        body: { name: 'box-2', size: 'small', snapshot: created.snapshot.name },
      }),
    );
    expect(JSON.parse(server.on('/workspaces/dev/computers')[0]?.body ?? '')).toEqual({
      name: 'box-2',
      size: 'small',
      snapshot: 'build-cache-1',
    });
  });
});
