import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import type { AttachedProcess, ProcessDriver } from '../../src/computers/processes/driver.js';
import { DesktopHelper } from '../../src/desktops/helper.js';
import { pngOfRows, rgbRows } from '../../src/desktops/pixels.js';

// The desktop helper's protocol from the server's side, against a stand-in process (no computer): what
// it answers is read back exactly; whatever it says out of turn, or not in time, fails that request
// `unavailable` and ends the process, never the server. And the pixels' way to a PNG.

/** A process that answers each line written to it with what `reply` makes of it. */
function standIn(reply: (line: string, say: (bytes: Buffer | string) => void) => void) {
  const outs: ((bytes: Buffer) => void)[] = [];
  const exits: (() => void)[] = [];
  let alive = true;
  const say = (bytes: Buffer | string) => {
    for (const listener of outs) listener(Buffer.from(bytes));
  };
  const process: AttachedProcess = {
    get alive() {
      return alive;
    },
    write: (bytes) => {
      for (const line of String(bytes).split('\n').filter(Boolean)) queueMicrotask(() => reply(line, say));
    },
    onStdout: (listener) => outs.push(listener),
    onStderr: () => {},
    onExit: (listener) => exits.push(listener),
    kill: () => {
      if (!alive) return;
      alive = false;
      for (const listener of exits) listener();
    },
  };
  const driver: ProcessDriver = {
    start: async () => {
      setTimeout(() => say('\x1eready\n'), 1);
      return process;
    },
  };
  return { driver, process };
}

const computer = {
  id: 'c',
  workspace_id: 'w',
  name: 'desk',
  size: 'small',
  image: 'debian-13-desktop',
  labels: {},
};
const signal = new AbortController().signal;
const pixels = Buffer.alloc(3 * 2 * 4, 0x80); // 3×2 pixels of 4 bytes

describe('the desktop helper', () => {
  test('a shot: its fields, then its deflated pixels, in two writes', async () => {
    const body = deflateSync(pixels);
    const { driver } = standIn((line, say) => {
      const [seq] = line.split(' ');
      say(
        Buffer.concat([Buffer.from(`\x1e${seq} shot 3 2 0 1 1 zraw ${body.length}\n`), body.subarray(0, 5)]),
      );
      say(body.subarray(5));
    });
    const helper = await DesktopHelper.start(driver, computer, 1 << 20);
    const shot = await helper.shot(1000, signal);
    expect({ ...shot, body: inflateSync(shot.body) }).toEqual({
      body: pixels,
      width: 3,
      height: 2,
      byteOrder: 0,
      cursor: { x: 1, y: 1 },
    });
  });

  test('input: applied, the pointer, the failed action and what xdotool said', async () => {
    const { driver } = standIn((line, say) => {
      const [seq] = line.split(' ');
      expect(line).toBe(`${seq} input m,10,20 end x,key,--,ctrl%2Bnosuchkey end`);
      say(`\x1e${seq} input 1 10 20 1 (symbol) No such key name 'nosuchkey'.\n`);
    });
    const helper = await DesktopHelper.start(driver, computer, 1 << 20);
    const answer = await helper.input(
      [[{ op: 'm', x: 10, y: 20 }], [{ op: 'x', args: ['key', '--', 'ctrl+nosuchkey'] }]],
      1000,
      signal,
    );
    expect(answer).toEqual({
      applied: 1,
      cursor: { x: 10, y: 20 },
      failed: { index: 1, message: "(symbol) No such key name 'nosuchkey'." },
    });
  });

  test.each([
    ['an answer to another request', (seq: number) => `\x1e${seq + 7} input 0 1 1 - \n`],
    ['bytes that are no answer line', () => 'garbage\n'],
    ['a picture larger than allowed', (seq: number) => `\x1e${seq} shot 3 2 0 1 1 zraw ${1 << 30}\n`],
  ])(
    '%s: that request fails unavailable, the process is ended, the next request fails at once',
    async (_, said) => {
      const { driver, process } = standIn((line, say) => say(said(Number(line.split(' ')[0]))));
      const helper = await DesktopHelper.start(driver, computer, 1 << 20);
      await expect(helper.shot(1000, signal)).rejects.toMatchObject({
        name: 'DriverError',
        code: 'unavailable',
      });
      expect(process.alive).toBe(false);
      await expect(helper.shot(1000, signal)).rejects.toMatchObject({ code: 'unavailable' });
    },
  );

  test('no answer in time: unavailable, and the process is ended', async () => {
    const { driver, process } = standIn(() => {});
    const helper = await DesktopHelper.start(driver, computer, 1 << 20);
    await expect(helper.input([[{ op: 'w', ms: 1 }]], 50, signal)).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(process.alive).toBe(false);
  });

  test('a helper that finds no display says why: the screen is not ready, retry', async () => {
    const { process } = standIn(() => {});
    const noDisplay: ProcessDriver = {
      start: async () => {
        setTimeout(() => {
          for (const write of said) write(Buffer.from('\x1efailed no display\n'));
        }, 1);
        return { ...process, alive: true, onStdout: (listener) => said.push(listener), onExit: () => {} };
      },
    };
    const said: ((bytes: Buffer) => void)[] = [];
    await expect(DesktopHelper.start(noDisplay, computer, 1 << 20)).rejects.toMatchObject({
      code: 'unavailable',
      details: { reason: 'screen_not_ready' },
    });
  });
});

describe('pixels to a PNG', () => {
  test('X pixels (B, G, R, unused) become RGB rows led by filter 0; scaled down, each box averaged', async () => {
    // 2×2: red, green / blue, white, least significant byte first.
    const x = Buffer.from([0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0]);
    const rows = rgbRows(x, { width: 2, height: 2 }, 0, { width: 2, height: 2 });
    expect([...rows]).toEqual([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]);
    const one = rgbRows(x, { width: 2, height: 2 }, 0, { width: 1, height: 1 });
    expect([...one]).toEqual([0, 128, 128, 128]);
    const png = Buffer.from(await pngOfRows(rows, 2, 2));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const idat = png.indexOf('IDAT');
    expect([...inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4)))]).toEqual([
      ...rows,
    ]);
    expect(png.subarray(-8, -4).toString('latin1')).toBe('IEND');
  });
});
