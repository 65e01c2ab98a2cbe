// @vitest-environment happy-dom
// useScreen against the simulated screen handlers (@svc/react/msw's screenHandlers, in Node): a real
// PNG at once (its signature and size checked, then inflated), input echoed with the pointer, and a new
// frame after it with the pointer where the click left it.
import { inflateSync } from 'node:zlib';
import { createClient } from '@svc/client';
import { screenshot } from '@svc/client/screen';
import { act, renderHook, waitFor } from '@testing-library/react';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenHandlers } from '../src/msw/index.js';
import { useScreen } from '../src/screen.js';

const BASE = 'http://api.test/v1';
const server = setupServer(...screenHandlers({ baseUrl: BASE }));
const client = createClient({ baseUrl: BASE, token: 'any' });
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

describe('the simulated screen', () => {
  it('answers a real PNG of the asked size: signature, IHDR, pixels that inflate to its rows', async () => {
    const shot = await screenshot(client, 'dev', 'desk', { maxWidth: 320 });
    expect([...shot.png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const view = new DataView(shot.png.buffer, shot.png.byteOffset);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([320, 200]);
    expect(shot.screen).toEqual({ width: 1280, height: 800 });
    const idat = Buffer.from(shot.png).indexOf('IDAT');
    const rows = inflateSync(Buffer.from(shot.png).subarray(idat + 4, idat + 4 + view.getUint32(idat - 4)));
    expect(rows.length).toBe(200 * (1 + 320 * 3));
  });

  it('useScreen shows frames; a click is echoed and the next frame has the pointer there', async () => {
    const { result, unmount } = renderHook(() =>
      useScreen({ client, workspace: 'dev', computer: 'desk', maxWidth: 320 }),
    );
    await waitFor(() => expect(result.current.status).toBe('live'));
    expect(result.current.frame?.src).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(result.current.frame).toMatchObject({ width: 320, height: 200, cursor: { x: 640, y: 400 } });
    expect(Number.isNaN(Date.parse(result.current.frame?.taken_at ?? ''))).toBe(false);
    let answer: unknown;
    await act(async () => {
      answer = await result.current.send([{ type: 'click', x: 100, y: 120 }]);
    });
    expect(answer).toEqual({ applied: 1, cursor: { x: 100, y: 120 }, simulated: true });
    await waitFor(() => expect(result.current.frame?.cursor).toEqual({ x: 100, y: 120 }));
    unmount();
  });
});
