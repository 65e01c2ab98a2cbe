// @vitest-environment happy-dom
// useTerminal against the simulated terminal handlers (@svc/react/msw's terminalHandlers, in Node): the
// output reaches an onData listener (what came before it too), write types in order, resize changes the
// size, the exit code ends it; React's second run of the effect gets the same terminal back; output
// lost because the page fell behind what the service keeps is counted (`skippedBytes`), and forgotten
// when the hook attaches to another terminal.
import { createClient } from '@svc/client';
import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
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

  it('counts output lost to falling behind what is kept (skippedBytes), and reads on', async () => {
    // The service ends the first stream at a gap (cursor_expired); read again without a cursor, the
    // oldest output kept starts 98 bytes past what the page had.
    const sse = (text: string) =>
      new HttpResponse(text, { headers: { 'Content-Type': 'text/event-stream', 'Request-Id': 'req-gap' } });
    let connections = 0;
    server.use(
      http.get(
        `${BASE}/workspaces/:workspace/computers/:computer/terminals/:terminal/output`,
        ({ request }) => {
          connections += 1;
          if (connections === 1)
            return sse(
              'id: 1\nevent: output\ndata: {"offset":0,"encoding":"utf-8","data":"$ "}\n\n' +
                'id: 1\nevent: stream.ended\ndata: {"reason":"cursor_expired","reconnect":false,"message":"behind"}\n\n',
            );
          expect(request.headers.get('last-event-id')).toBeNull();
          return sse(
            'id: 7\nevent: output\ndata: {"offset":100,"encoding":"utf-8","data":"late"}\n\n' +
              'id: 8\nevent: exit\ndata: {"exit_code":0,"reason":"exited","closed_at":"2026-12-07T20:00:00Z"}\n\n',
          );
        },
      ),
    );
    try {
      const { result, rerender } = renderHook(
        ({ attach }: { attach: string | undefined }) =>
          useTerminal({
            client,
            workspace: 'dev',
            computer: 'box',
            terminal: attach,
            open: { cols: 40, rows: 10 },
          }),
        { initialProps: { attach: undefined as string | undefined } },
      );
      let seen = '';
      const stop = result.current.onData((bytes) => {
        seen += new TextDecoder().decode(bytes);
      });
      await waitFor(() => expect(result.current.status).toBe('closed'));
      expect(seen).toBe('$ late');
      expect(result.current.skippedBytes).toBe(98);
      expect(result.current.exitCode).toBe(0);
      expect(connections).toBe(2);
      stop();
      // Attached to another terminal, nothing of this one's carries over.
      rerender({ attach: 'another' });
      await waitFor(() => expect(result.current.status).not.toBe('closed'));
      expect(result.current.skippedBytes).toBe(0);
      expect(result.current.exitCode).toBeUndefined();
    } finally {
      server.resetHandlers();
    }
  });
});
