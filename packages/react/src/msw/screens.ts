// A simulated screen for the mock: MSW handlers of the screen operations that answer a real PNG drawn
// here (a desktop with a title bar and the pointer as a small square where input left it), echo input
// as the server's simulated driver does (the pointer follows moves, clicks, drags and scrolls;
// `simulated: true`), and stream the screen live, a frame at once and one after each input. Paths come
// from the document; bodies follow the spec. Browser-safe: the PNG is deflated with CompressionStream.
import type { OpenApiDocument } from '@svc/contract/browser';
import { type HttpHandler, HttpResponse, http } from 'msw';
import { BUNDLED_DOCUMENT } from './document.js';
import { operationById } from './examples.js';

/** Options of {@link screenHandlers}. */
export interface ScreenMockOptions {
  /** Where the client sends requests: its `baseUrl`. */
  baseUrl: string;
  /** The document whose screen paths to answer. Default: the bundled v1 document. */
  document?: OpenApiDocument;
  /** The simulated screen's size. Default 1280×800, the API's default. */
  screen?: { width: number; height: number };
}

interface Point {
  x: number;
  y: number;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const compressed = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(compressed).arrayBuffer());
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * A PNG of `width`×`height` (8-bit RGB): a flat desktop with a title bar, and the pointer, at
 * `cursor` in a screen of `screen`'s size, as a small white square with a dark edge.
 *
 * @example
 * const png = await simulatedScreenPng(320, 200, { width: 1280, height: 800 }, { x: 640, y: 400 });
 */
export async function simulatedScreenPng(
  width: number,
  height: number,
  screen: { width: number; height: number },
  cursor: Point,
): Promise<Uint8Array> {
  const row = 1 + width * 3;
  const raw = new Uint8Array(row * height);
  const bar = Math.max(1, Math.round(height / 25));
  const px = Math.floor((cursor.x * width) / screen.width);
  const py = Math.floor((cursor.y * height) / screen.height);
  const size = Math.max(3, Math.round(width / 80));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const inPointer = x >= px && x < px + size && y >= py && y < py + size;
      const edge = inPointer && (x === px || y === py || x === px + size - 1 || y === py + size - 1);
      const [r, g, b] = inPointer
        ? edge
          ? [0x10, 0x10, 0x10]
          : [0xff, 0xff, 0xff]
        : y < bar
          ? [0x33, 0x33, 0x33]
          : [0x3a, 0x6e, 0xa5];
      const at = y * row + 1 + x * 3;
      raw[at] = r;
      raw[at + 1] = g;
      raw[at + 2] = b;
    }
  }
  const header = new Uint8Array(13);
  new DataView(header.buffer).setUint32(0, width);
  new DataView(header.buffer).setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8);
  const parts = [
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk('IHDR', header),
    chunk('IDAT', await deflate(raw)),
    chunk('IEND', new Uint8Array(0)),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    png.set(part, at);
    at += part.length;
  }
  return png;
}

/** The size of a picture of `screen` within the maxima, proportions kept, never larger (as the server). */
function scaled(screen: { width: number; height: number }, url: URL) {
  const maxWidth = Number(url.searchParams.get('max_width') ?? screen.width);
  const maxHeight = Number(url.searchParams.get('max_height') ?? screen.height);
  const factor = Math.min(1, maxWidth / screen.width, maxHeight / screen.height);
  return {
    width: Math.max(1, Math.round(screen.width * factor)),
    height: Math.max(1, Math.round(screen.height * factor)),
  };
}

const base64 = (bytes: Uint8Array) => {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
};

/**
 * MSW handlers that simulate a computer's screen (`downloadComputerScreen`, `inputComputer`,
 * `streamComputerScreenFrames`) for any computer: a real PNG drawn in code with the pointer where
 * input left it, input checked loosely and echoed (`simulated: true`), and the screen live, a frame
 * at once and one after each input. Put them before the mock's handlers, which answer the same paths
 * from examples.
 *
 * @example
 * import { createMock, screenHandlers } from '@svc/react/msw';
 * import { setupWorker } from 'msw/browser';
 * const baseUrl = 'http://api.test/v1';
 * const worker = setupWorker(...screenHandlers({ baseUrl }), ...createMock({ baseUrl }).handlers);
 */
export function screenHandlers(options: ScreenMockOptions): HttpHandler[] {
  const document = options.document ?? BUNDLED_DOCUMENT;
  const base = options.baseUrl.replace(/\/+$/, '');
  const screen = options.screen ?? { width: 1280, height: 800 };
  const route = (operationId: string) =>
    `${base}${operationById(document, operationId).path.replaceAll(/\{([^}]+)\}/g, ':$1')}`;
  const pointers = new Map<string, Point>();
  const watchers = new Map<string, Set<() => void>>();
  const pointer = (computer: string) =>
    pointers.get(computer) ?? { x: Math.floor(screen.width / 2), y: Math.floor(screen.height / 2) };

  return [
    http.get(route('downloadComputerScreen'), async ({ request, params }) => {
      const size = scaled(screen, new URL(request.url));
      const cursor = pointer(String(params.computer));
      const png = await simulatedScreenPng(size.width, size.height, screen, cursor);
      return new HttpResponse(png as BodyInit, {
        headers: {
          'Content-Type': 'image/png',
          'Content-Length': String(png.length),
          'Screen-Width': String(screen.width),
          'Screen-Height': String(screen.height),
          'Cursor-X': String(cursor.x),
          'Cursor-Y': String(cursor.y),
          'Cache-Control': 'no-store',
        },
      });
    }),
    http.post(route('inputComputer'), async ({ request, params }) => {
      const computer = String(params.computer);
      const { actions } = (await request.json()) as { actions: Partial<Record<string, unknown>>[] };
      let cursor = pointer(computer);
      for (const action of actions) {
        const at = (x: unknown, y: unknown) =>
          typeof x === 'number' && typeof y === 'number'
            ? { x: Math.min(screen.width - 1, x), y: Math.min(screen.height - 1, y) }
            : cursor;
        cursor = action.type === 'drag' ? at(action.to_x, action.to_y) : at(action.x, action.y);
      }
      pointers.set(computer, cursor);
      for (const wake of watchers.get(computer) ?? []) wake();
      return HttpResponse.json({ input: { applied: actions.length, cursor, simulated: true } });
    }),
    http.get(route('streamComputerScreenFrames'), ({ request, params }) => {
      const computer = String(params.computer);
      const size = scaled(screen, new URL(request.url));
      let id = Number(
        request.headers.get('Last-Event-ID') ?? new URL(request.url).searchParams.get('after') ?? 0,
      );
      let wake: (() => void) | undefined;
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          const send = async () => {
            const cursor = pointer(computer);
            const png = await simulatedScreenPng(size.width, size.height, screen, cursor);
            const data = { png: base64(png), ...size, screen, cursor, taken_at: new Date().toISOString() };
            id += 1;
            try {
              controller.enqueue(
                encoder.encode(`id: ${id}\nevent: frame\ndata: ${JSON.stringify(data)}\n\n`),
              );
            } catch {
              // the reader has gone
            }
          };
          // One frame at a time, in order: a frame drawn later is never sent before an earlier one.
          let queue = Promise.resolve();
          const next = () => {
            queue = queue.then(send);
          };
          wake = next;
          const set = watchers.get(computer) ?? new Set();
          watchers.set(computer, set);
          set.add(wake);
          next();
        },
        cancel() {
          if (wake) watchers.get(computer)?.delete(wake);
        },
      });
      return new HttpResponse(body, {
        headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' },
      });
    }),
  ];
}
