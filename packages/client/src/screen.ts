// Screen entry (`@svc/client/screen`): a computer's screenshot (`downloadComputerScreen`) as bytes with
// what its headers say. The generated client answers the PNG as a body and leaves the size and the
// pointer in four headers; every face wants all three together, so they are read here once.
import type { SvcClient } from './client.js';
import type { ApiPaths, ScreenFrameData } from './contract.js';
import { stream } from './streams.js';
import { errorFromResponse } from './unwrap.js';

const SCREEN_PATH = '/workspaces/{workspace}/computers/{computer}/screen';

/**
 * A screenshot: the PNG, the screen's own size (the space input coordinates are in) and the pointer.
 *
 * @example
 * import type { Screenshot } from '@svc/client/screen';
 * const isSmaller = (shot: Screenshot) => shot.png.byteLength > 0 && shot.screen.width > 640;
 */
export interface Screenshot {
  /** The picture, a PNG, perhaps scaled down (`maxWidth`, `maxHeight`). */
  png: Uint8Array;
  /** `Screen-Width` and `Screen-Height`: the screen's size, whatever the picture's. */
  screen: { width: number; height: number };
  /** `Cursor-X` and `Cursor-Y`: where the pointer is, in the screen's pixels. */
  cursor: { x: number; y: number };
}

/** Options of {@link screenshot}. */
export interface ScreenshotOptions {
  /** Scale the picture down to at most this many pixels across (proportions kept, never up). */
  maxWidth?: number | undefined;
  /** Scale the picture down to at most this many pixels high. */
  maxHeight?: number | undefined;
  signal?: AbortSignal | undefined;
}

type Get = (
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

function header(response: Response, name: string): number {
  const value = Number(response.headers.get(name));
  return Number.isInteger(value) ? value : 0;
}

/**
 * Takes a screenshot of a running computer's screen: the PNG's bytes, the screen's size and the
 * pointer, from one `GET …/screen`. A refusal (`409 invalid_state` for a computer without a display,
 * `429 rate_limited`, …) throws `ApiError`.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { screenshot } from '@svc/client/screen';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { png, screen, cursor } = await screenshot(client, 'dev', 'desk', { maxWidth: 640 });
 * console.log(png.byteLength, screen.width, cursor.x);
 */
export async function screenshot(
  client: SvcClient<ApiPaths>,
  workspace: string,
  computer: string,
  options: ScreenshotOptions = {},
): Promise<Screenshot> {
  const query: Record<string, number> = {};
  if (options.maxWidth !== undefined) query.max_width = options.maxWidth;
  if (options.maxHeight !== undefined) query.max_height = options.maxHeight;
  const get = (client as unknown as { GET: Get }).GET;
  const { data, error, response } = await get(SCREEN_PATH, {
    params: { path: { workspace, computer }, query },
    parseAs: 'arrayBuffer',
    signal: options.signal,
  });
  if (!response.ok) throw errorFromResponse(response, error);
  return {
    png: new Uint8Array((data as ArrayBuffer | undefined) ?? new ArrayBuffer(0)),
    screen: { width: header(response, 'Screen-Width'), height: header(response, 'Screen-Height') },
    cursor: { x: header(response, 'Cursor-X'), y: header(response, 'Cursor-Y') },
  };
}

/**
 * One frame of a computer's live screen: the spec's `ScreenFrame` with the picture decoded (a PNG's
 * bytes) and `id`, which numbers the frames of one stream.
 *
 * @example
 * import type { ScreenFrame } from '@svc/client/screen';
 * const scale = (frame: ScreenFrame) => frame.screen.width / frame.width;
 */
export type ScreenFrame = Omit<ScreenFrameData, 'png'> & { id: string; png: Uint8Array };

/**
 * Watches a running computer's screen (`streamComputerScreenFrames`) as an async iterator of frames:
 * one at once, then one whenever the picture or the pointer changed (at most 4 a second). A dropped
 * connection is resumed as every stream is (`@svc/client/streams`); it returns when the computer stops.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { watchScreen } from '@svc/client/screen';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * for await (const frame of watchScreen(client, 'dev', 'desk', { maxWidth: 640 })) {
 *   console.log(frame.id, frame.png.byteLength, frame.cursor.x, frame.cursor.y);
 * }
 */
export async function* watchScreen(
  client: SvcClient<ApiPaths>,
  workspace: string,
  computer: string,
  options: ScreenshotOptions = {},
): AsyncGenerator<ScreenFrame, void, undefined> {
  const query: { max_width?: number; max_height?: number } = {};
  if (options.maxWidth !== undefined) query.max_width = options.maxWidth;
  if (options.maxHeight !== undefined) query.max_height = options.maxHeight;
  for await (const e of stream(client, 'streamComputerScreenFrames', {
    path: { workspace, computer },
    query,
    ...(options.signal ? { signal: options.signal } : {}),
  })) {
    if (e.event !== 'frame') continue;
    const { png, ...rest } = e.data;
    yield { id: e.id, png: Uint8Array.from(atob(png), (c) => c.charCodeAt(0)), ...rest };
  }
}
