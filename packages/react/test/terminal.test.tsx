// @vitest-environment happy-dom
// useTerminal against the simulated terminal handlers (@svc/react/msw's terminalHandlers, in Node): the
// output reaches an onData listener (what came before it too), write types in order, resize changes the
// size, the exit code ends it; React's second run of the effect gets the same terminal back.
import { createClient } from '@svc/client';
import { act, renderHook, waitFor } from '@testing-library/react';
import { setupServer } from 'msw/node';
import { StrictMode } from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { terminalHandlers } from '../src/msw/index.js';
import { useTerminal } from '../src/terminal.js';

const BASE = 'http://api.test/v1';
const server = setupServer(...terminalHandlers({ baseUrl: BASE }));
const client = createClient({ baseUrl: BASE, token: 'any' });
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

describe('useTerminal', () => {
  it('opens, streams output to onData, types, resizes, and ends with the exit code', async () => {
    const { result } = renderHook(
      () => useTerminal({ client, workspace: 'dev', computer: 'box', open: { cols: 40, rows: 10 } }),
      { wrapper: StrictMode },
    );
    await waitFor(() => expect(result.current.status).toBe('open'));
    let seen = '';
    const decoder = new TextDecoder();
    // Subscribed after the prompt came: it is handed over first.
    const stop = result.current.onData((bytes) => {
      seen += decoder.decode(bytes, { stream: true });
    });
    await waitFor(() => expect(seen).toBe('$ '));
    act(() => result.current.write('echo hi\r'));
    await waitFor(() => expect(seen).toBe('$ echo hi\r\nhi\r\n$ '));
    act(() => result.current.resize(100, 30));
    const list = await client.GET('/workspaces/{workspace}/computers/{computer}/terminals', {
      params: { path: { workspace: 'dev', computer: 'box' } },
    });
    // Strict Mode ran the effect twice: one Idempotency-Key, one terminal.
    expect(list.data?.terminals).toHaveLength(1);
    await waitFor(async () => {
      const got = await client.GET('/workspaces/{workspace}/computers/{computer}/terminals/{terminal}', {
        params: { path: { workspace: 'dev', computer: 'box', terminal: result.current.terminal?.id ?? '' } },
      });
      expect(got.data?.terminal).toMatchObject({ cols: 100, rows: 30 });
    });
    act(() => result.current.write(new TextEncoder().encode('exit 3\r')));
    await waitFor(() => expect(result.current.status).toBe('closed'));
    expect(result.current.exitCode).toBe(3);
    expect(seen.endsWith('$ exit 3\r\n')).toBe(true);
    stop();
  });
});
