import { crc32, deflateSync } from 'node:zlib';

/**
 * A PNG of `width`×`height` (8-bit RGB): what the simulated screen shows, a flat desktop with a title
 * bar, drawn here so the simulated driver needs no image file.
 *
 * @example
 * const png = simulatedScreenPng(1280, 800); // starts with the PNG signature 89 50 4e 47
 */
export function simulatedScreenPng(width: number, height: number): Uint8Array {
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  const bar = Math.max(1, Math.round(height / 25));
  for (let y = 0; y < height; y++) {
    const [r, g, b] = y < bar ? [0x33, 0x33, 0x33] : [0x3a, 0x6e, 0xa5];
    for (let x = 0; x < width; x++) {
      const at = y * row + 1 + x * 3;
      raw[at] = r;
      raw[at + 1] = g;
      raw[at + 2] = b;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, not interlaced
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}
