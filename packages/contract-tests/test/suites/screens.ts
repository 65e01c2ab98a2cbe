// Screens and input (design §18): a computer of an image with a display, its screen as `image/png` with
// its size and the pointer in headers, and input actions answered with the pointer. On a server the
// driver is the simulated one unless the target says otherwise: its screen is a fixed picture and its
// input is echoed (`simulated: true`), which is what the contract can hold on every driver.
import { unwrap, waitForOperations } from '@svc/client';
import { expect, it } from 'vitest';
import { fx, key } from '../support/fixtures.js';
import { contractClient, recordingFetch, uniqueName } from '../support/harness.js';
import { baseUrl, onMock } from '../support/target.js';

const WAIT = { timeoutMs: 60_000, pollSeconds: 10, minIntervalMs: 200 };
const SCREEN = '/workspaces/{workspace}/computers/{computer}/screen';

// biome-ignore lint/suspicious/noExplicitAny: the picture is read raw; the typed client types JSON calls
type Untyped = any;

export function screensSuite(): void {
  const client = () => contractClient();
  const at = () => ({ workspace: fx.workspace, computer: fx.desk });

  it('a computer of a display image (debian-13-desktop) is created with the screen it asks for', async () => {
    const created = await unwrap(
      client().POST('/workspaces/{workspace}/computers', {
        params: { path: { workspace: fx.workspace }, header: { 'Idempotency-Key': key() } },
        body: {
          name: uniqueName('desk'),
          size: fx.size,
          image: 'debian-13-desktop',
          screen: { width: 1024, height: 768 },
        },
      }),
    );
    fx.desk = created.computer.id;
    const [done] = await waitForOperations(client(), created.operations, WAIT);
    expect(done!.state).toBe('succeeded');
  });

  it('downloadComputerScreen answers image/png with its length, the screen size and the pointer', async () => {
    const { data, response } = (await (
      contractClient({ fetch: recordingFetch(baseUrl()) } as Untyped).GET as Untyped
    )(SCREEN, { params: { path: at(), query: { max_width: 512 } }, parseAs: 'arrayBuffer' })) as {
      data?: ArrayBuffer;
      response: Response;
    };
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe('image/png');
    const bytes = new Uint8Array(data ?? new ArrayBuffer(0));
    expect(response.headers.get('Content-Length')).toBe(String(bytes.length));
    for (const header of ['Screen-Width', 'Screen-Height', 'Cursor-X', 'Cursor-Y'])
      expect(response.headers.get(header)).toMatch(/^[0-9]+$/);
    // A PNG on both: the mock answers a picture of its own (tools/mock-bytes.mjs).
    expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    if (onMock) return;
    expect([response.headers.get('Screen-Width'), response.headers.get('Screen-Height')]).toEqual([
      '1024',
      '768',
    ]);
    // Scaled to fit 512 across: the PNG's own size (IHDR) is half the screen's.
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([512, 384]);
  });

  it('inputComputer applies the actions in order and answers the pointer', async () => {
    const { input } = await unwrap(
      client().POST('/workspaces/{workspace}/computers/{computer}/input', {
        params: { path: at(), header: { 'Idempotency-Key': key() } },
        body: {
          actions: [
            { type: 'click', x: 100, y: 200 },
            { type: 'type', text: 'hello' },
            { type: 'key', keys: 'Return' },
          ],
        },
      }),
    );
    expect(input.cursor.x).toBeGreaterThanOrEqual(0);
    if (onMock) return;
    expect(input).toMatchObject({ applied: 3, cursor: { x: 100, y: 200 } });
    expect(input.failed).toBeUndefined();
  });
  // The desktop is deleted at cleanup (suites/cleanup.ts): the streams suite watches its screen first.
}
