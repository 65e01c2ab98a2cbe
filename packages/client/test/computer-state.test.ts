import { describe, expect, it } from 'vitest';
import { type Computer, createClient, TimeoutError, waitForComputerState } from '../src/index.js';
import { BASE, errorBody, fakeFetch, json } from './helpers.js';

const box = (state: string) =>
  ({
    id: '01m6cnenctgek8472bc9m7jfnzd',
    workspace_id: '01m6bxdm0dxxxstsc03qpv3hzmd',
    name: 'box',
    state,
    size: 'small',
    image: 'ubuntu-2404',
    labels: {},
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  }) as unknown as Computer;

/** Answers each long-poll with the next computer of the script (the last one repeats). */
function scripted(script: Computer[], wanted: (state: string) => boolean = () => false) {
  let i = 0;
  return fakeFetch(() => {
    const computer = script[Math.min(i++, script.length - 1)]!;
    return json(200, { computer }, { 'Wait-Result': wanted(computer.state) ? 'reached' : 'timed_out' });
  });
}
const at = { workspace: 'dev', computer: 'box' };

describe('waitForComputerState', () => {
  it('one wait is one request: the server holds it and answers when the state holds', async () => {
    const server = scripted([box('running')], (s) => s === 'running');
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const computer = await waitForComputerState(client, at, ['running', 'failed']);
    expect(computer.state).toBe('running');
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.path).toBe('/workspaces/dev/computers/box');
    expect(server.seen[0]!.search.get('wait_for')).toBe('running,failed');
    expect(server.seen[0]!.search.get('wait')).toBe('60');
  });

  it('long-polls again after a server-side timeout, paced by minIntervalMs', async () => {
    const server = scripted([box('starting'), box('running')]);
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const pauses: number[] = [];
    const computer = await waitForComputerState(client, at, ['running'], {
      pollSeconds: 5,
      sleep: async (ms) => void pauses.push(ms),
    });
    expect(computer.state).toBe('running');
    expect(server.seen.map((s) => s.search.get('wait'))).toEqual(['5', '5']);
    expect(pauses).toHaveLength(1);
  });

  it('a deleted computer ends the wait (it leaves that state no more)', async () => {
    const server = scripted([box('deleted')]);
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    expect((await waitForComputerState(client, at, ['running'])).state).toBe('deleted');
  });

  it('throws TimeoutError carrying the last computer seen', async () => {
    const server = scripted([box('stopping')]);
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const error = await waitForComputerState(client, at, ['stopped'], {
      timeoutMs: 50,
      minIntervalMs: 20,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).computer?.state).toBe('stopping');
  });

  it('a failed poll rejects with its ApiError code', async () => {
    const server = fakeFetch(() => json(404, errorBody('not_found')));
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    await expect(waitForComputerState(client, at, ['running'])).rejects.toMatchObject({ code: 'not_found' });
  });
});
