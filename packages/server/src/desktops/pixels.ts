import { promisify } from 'node:util';
import { crc32, deflate } from 'node:zlib';
import type { ScreenSize } from './actions.js';

const deflating = promisify(deflate);

/**
 * A PNG of 8-bit RGB rows, each already led by its filter byte (`raw` is `height` rows of
 * `1 + width * 3` bytes). Deflated off the event loop (zlib's thread pool), at low effort: a
 * screenshot is sent at once and thrown away, so speed beats size.
 *
 * @example
 * const png = await pngOfRows(rows, 1280, 800);
 */
export async function pngOfRows(raw: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, adaptive filters, not interlaced
  const data = await deflating(raw, { level: 1 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', data),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * X's 32-bit pixels (depth 24: B, G, R, unused in least-significant-first order; unused, R, G, B in
 * the other) as PNG rows of RGB, each led by filter 0, scaled down to `size` by averaging the source
 * pixels each target pixel covers (text stays legible, unlike picking one pixel in each box).
 *
 * @example
 * const rows = rgbRows(pixels, { width: 1280, height: 800 }, 0, { width: 640, height: 400 });
 */
export function rgbRows(pixels: Uint8Array, screen: ScreenSize, byteOrder: number, size: ScreenSize): Buffer {
  const [r, g, b] = byteOrder === 0 ? [2, 1, 0] : [1, 2, 3];
  const { width, height } = screen;
  const row = 1 + size.width * 3;
  const out = Buffer.alloc(row * size.height);
  if (size.width === width && size.height === height) {
    for (let y = 0; y < height; y++) {
      let o = y * row + 1;
      let i = y * width * 4;
      for (let x = 0; x < width; x++, i += 4, o += 3) {
        out[o] = pixels[i + r] as number;
        out[o + 1] = pixels[i + g] as number;
        out[o + 2] = pixels[i + b] as number;
      }
    }
    return out;
  }
  const xs = Array.from({ length: size.width + 1 }, (_, x) => Math.floor((x * width) / size.width));
  for (let ty = 0; ty < size.height; ty++) {
    const y0 = Math.floor((ty * height) / size.height);
    const y1 = Math.max(y0 + 1, Math.floor(((ty + 1) * height) / size.height));
    let o = ty * row + 1;
    for (let tx = 0; tx < size.width; tx++, o += 3) {
      const x0 = xs[tx] as number;
      const x1 = Math.max(x0 + 1, xs[tx + 1] as number);
      let sr = 0;
      let sg = 0;
      let sb = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0, i = (y * width + x0) * 4; x < x1; x++, i += 4) {
          sr += pixels[i + r] as number;
          sg += pixels[i + g] as number;
          sb += pixels[i + b] as number;
        }
      }
      const n = (x1 - x0) * (y1 - y0);
      out[o] = Math.round(sr / n);
      out[o + 1] = Math.round(sg / n);
      out[o + 2] = Math.round(sb / n);
    }
  }
  return out;
}
