import { describe, expect, it } from 'vitest';
import {
  createClient,
  isOperationDone,
  type Operation,
  TimeoutError,
  waitForOperations,
} from '../src/index.js';
import { BASE, errorBody, fakeFetch, json } from './helpers.js';

const op = (id: string, state: string, progress: number) =>
  ({
    id,
    workspace_id: 'w',
    type: 'computer.start',
    state,
    progress,
    target: { type: 'computer', id: 'c' },
    created_by: 'p',
    created_at: '2026-01-01T00:00:00Z',
  }) as unknown as Operation;

/** Answers each poll of operation `id` with the next entry of its script (the last one repeats). */
function scripted(scripts: Record<string, Operation[]>) {
  const served: Record<string, number> = {};
  return fakeFetch((_r, seen) => {
    const id = seen.path.split('/').pop()!;
    const script = scripts[id];
    if (!script) return json(404, errorBody('not_found'));
    const i = Math.min(served[id] ?? 0, script.length - 1);
    served[id] = i + 1;
    return json(200, { operation: script[i] });
  });
}

const fast = { minIntervalMs: 0, pollSeconds: 5 };

describe('waitForOperations', () => {
  it('long-polls every operation to the end and reports each change once', async () => {
    const server = scripted({
      a: [op('a', 'running', 10), op('a', 'running', 10), op('a', 'running', 60), op('a', 'succeeded', 100)],
      b: [op('b', 'failed', 40)],
    });
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const progress: string[] = [];
    const done = await waitForOperations(client, [op('a', 'pending', 0), 'b'], {
      ...fast,
      onProgress: (o) => progress.push(`${o.id}:${o.state}:${o.progress}`),
    });
    expect(done.map((o) => `${o.id}:${o.state}`)).toEqual(['a:succeeded', 'b:failed']);
    expect(progress.filter((p) => p.startsWith('a'))).toEqual([
      'a:running:10',
      'a:running:60',
      'a:succeeded:100',
    ]);
    expect(progress.filter((p) => p.startsWith('b'))).toEqual(['b:failed:40']);
    expect(server.on('/operations/a')).toHaveLength(4);
    expect(server.seen.every((s) => s.search.get('wait') === '5')).toBe(true);
  });

  it('makes no request for operations that are already finished', async () => {
    const server = scripted({});
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const done = await waitForOperations(client, [op('x', 'succeeded', 100)]);
    expect(done[0]!.state).toBe('succeeded');
    expect(server.seen).toHaveLength(0);
  });

  it('paces polls by minIntervalMs when the server answers at once', async () => {
    const server = scripted({ a: [op('a', 'running', 0), op('a', 'succeeded', 100)] });
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const pauses: number[] = [];
    await waitForOperations(client, ['a'], {
      minIntervalMs: 1000,
      sleep: async (ms) => void pauses.push(ms),
    });
    expect(pauses).toHaveLength(1);
    expect(pauses[0]).toBeGreaterThan(900);
  });

  /**
   * A long-poll that only ends when its request is aborted, like a server holding `?wait=60`.
   * It keeps the requests in flight, as a real connection does: without that nothing but a WeakRef
   * (undici's signal chaining) would reach them, and the whole pending poll could be collected.
   */
  const hanging = () => {
    const inFlight: Request[] = [];
    const server = fakeFetch(
      (request) =>
        new Promise<Response>((_resolve, reject) => {
          inFlight.push(request);
          // Like fetch: an already aborted signal rejects at once.
          if (request.signal.aborted) reject(request.signal.reason);
          request.signal.addEventListener('abort', () => reject(request.signal.reason));
        }),
    );
    return { ...server, inFlight };
  };

  it('throws TimeoutError with the last states seen, cancelling the poll in flight', async () => {
    const server = hanging();
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const err = await waitForOperations(client, [op('a', 'running', 30)], { timeoutMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: 'timeout', operations: [{ id: 'a', progress: 30 }] });
    // The poll in flight was cancelled, not left to run out its `?wait=`.
    expect(server.inFlight.length).toBeGreaterThan(0);
    expect(server.inFlight.every((request) => request.signal.aborted)).toBe(true);
  });

  it('rejects with the abort reason when the signal fires', async () => {
    const server = hanging();
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop waiting')), 20);
    await expect(
      waitForOperations(client, ['a'], { signal: controller.signal, timeoutMs: 10_000 }),
    ).rejects.toThrow('stop waiting');
  });

  it('rejects at once for an already aborted signal', async () => {
    const server = scripted({});
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    await expect(
      waitForOperations(client, ['a'], { signal: AbortSignal.abort(new Error('no')) }),
    ).rejects.toThrow('no');
    expect(server.seen).toHaveLength(0);
  });

  it('throws the ApiError of a failing poll', async () => {
    const server = scripted({});
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    await expect(waitForOperations(client, ['missing'], fast)).rejects.toMatchObject({
      name: 'ApiError',
      code: 'not_found',
    });
  });
});

describe('a value the spec does not list yet (open enums, x-extensible-enum)', () => {
  it('an unknown operation state is not final: waiting goes on until a known final state', async () => {
    const server = scripted({
      a: [op('a', 'paused_for_review', 30), op('a', 'succeeded', 100)],
    });
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const seen: string[] = [];
    const [done] = await waitForOperations(client, ['a'], { ...fast, onProgress: (o) => seen.push(o.state) });
    expect(seen).toEqual(['paused_for_review', 'succeeded']);
    expect(done?.state).toBe('succeeded');
  });

  it('an unknown computer state or operation type passes through unwrap untouched', async () => {
    const server = fakeFetch(() =>
      json(200, {
        operation: { ...op('a', 'running', 5), type: 'computer.resize', target: { type: 'disk', id: 'd' } },
      }),
    );
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const { data } = await client.GET('/operations/{operation}', { params: { path: { operation: 'a' } } });
    expect(data?.operation.type).toBe('computer.resize');
    expect(data?.operation.target.type).toBe('disk');
  });
});

describe("the final states are the spec's", () => {
  it('isOperationDone is true exactly for succeeded, failed and canceled of the spec enum', async () => {
    const { loadDocument } = await import('@svc/contract');
    const schema = loadDocument().components?.schemas?.OperationState as { enum?: string[] } | undefined;
    const states = schema?.enum ?? [];
    expect(states).toContain('pending');
    expect(states.filter((state) => isOperationDone({ state })).sort()).toEqual([
      'canceled',
      'failed',
      'succeeded',
    ]);
  });

  it('a computer.exec operation is waited for like any other and keeps its result', async () => {
    const execution = { exit_code: 0, encoding: 'utf-8', stdout: 'ok\n', stderr: '', duration_ms: 5 };
    const done = { ...op('x', 'succeeded', 100), type: 'computer.exec', result: { execution } } as Operation;
    const server = scripted({ x: [op('x', 'running', 0), done] });
    const client = createClient({ baseUrl: BASE, token: 't', fetch: server.fetch });
    const [final] = await waitForOperations(client, ['x'], fast);
    expect(final?.result?.execution).toMatchObject({ stdout: 'ok\n', exit_code: 0 });
  });
});
