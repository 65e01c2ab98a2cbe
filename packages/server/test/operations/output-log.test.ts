import { describe, expect, test } from 'vitest';
import { incompleteTail, MAX_CHUNK_BYTES, OutputLog, outputChunk } from '../../src/computers/output-log.js';
import type { OutputEvent } from '../../src/computers/repositories/operation-output.js';

// The way from a command's writes to its output log's chunks (design §14), without a database.

const bytesOf = (text: string) => new TextEncoder().encode(text);
const decode = (chunk: { encoding: string; data: string }) =>
  chunk.encoding === 'base64' ? Buffer.from(chunk.data, 'base64') : Buffer.from(chunk.data, 'utf8');

/** The chunks of each stream joined, and a check that each starts where the previous one ended. */
function joined(events: OutputEvent[], stream: 'stdout' | 'stderr'): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (const event of events) {
    if (event.event !== 'output' || event.data.stream !== stream) continue;
    expect(event.data.offset).toBe(offset);
    const bytes = decode(event.data);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.length).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
    offset += bytes.length;
    parts.push(bytes);
  }
  return Buffer.concat(parts);
}

/** A log whose appends are recorded, and succeed after `delayMs`. */
function recorded(maxBytes = 1 << 20, delayMs = 0) {
  const appended: OutputEvent[][] = [];
  const log = new OutputLog({
    maxBytes,
    flushMs: 5,
    append: async (events) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      appended.push(events);
      return true;
    },
  });
  const all = async () => {
    const rest = await log.finish(); // waits for the append in flight
    return [...appended.flat(), ...rest];
  };
  return { log, appended, all };
}

describe('incompleteTail', () => {
  test.each<[string, number[], number]>([
    ['ascii', [0x61, 0x62], 0],
    ['a whole 2-byte character', [0xc3, 0xa9], 0],
    ['the lead of a 2-byte character', [0x61, 0xc3], 1],
    ['two bytes of a 3-byte character', [0xe2, 0x82], 2],
    ['a whole 3-byte character', [0xe2, 0x82, 0xac], 0],
    ['three bytes of a 4-byte character', [0xf0, 0x9f, 0x98], 3],
    ['a whole 4-byte character', [0xf0, 0x9f, 0x98, 0x80], 0],
    ['a stray continuation byte', [0x61, 0x80], 0],
    ['a byte never in UTF-8', [0x61, 0xff], 0],
    ['empty', [], 0],
  ])('%s', (_name, bytes, tail) => {
    expect(incompleteTail(new Uint8Array(bytes))).toBe(tail);
  });
});

describe('outputChunk', () => {
  test.each<[string, Uint8Array, 'utf-8' | 'base64']>([
    ['text', bytesOf('héllo\n'), 'utf-8'],
    ['a NUL byte', new Uint8Array([0x61, 0x00, 0x62]), 'base64'],
    ['not UTF-8', new Uint8Array([0xff, 0xfe]), 'base64'],
  ])('%s', (_name, bytes, encoding) => {
    const chunk = outputChunk('stdout', 7, bytes);
    expect(chunk).toMatchObject({ stream: 'stdout', offset: 7, encoding });
    expect(decode(chunk)).toEqual(Buffer.from(bytes));
  });
});

describe('OutputLog', () => {
  test('a character cut between two writes is never cut between two chunks; each stream keeps its bytes and order', async () => {
    const { log, all } = recorded();
    const text = bytesOf('añ€😀b');
    // Every cut point, one write per byte, stderr between them.
    for (const byte of text) {
      log.write('stdout', new Uint8Array([byte]));
      log.write('stderr', bytesOf('.'));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const events = await all();
    expect(joined(events, 'stdout')).toEqual(Buffer.from(text));
    expect(joined(events, 'stderr').toString()).toBe('.'.repeat(text.length));
    for (const event of events)
      if (event.event === 'output' && event.data.stream === 'stdout')
        expect(event.data.encoding).toBe('utf-8');
  });

  test('a character split across writes that alternate with the other stream, then finished at once, stays whole', async () => {
    const { log, all } = recorded();
    const text = bytesOf('😀€');
    // No flush in between: every write is still waiting when the log is finished.
    for (const byte of text) {
      log.write('stdout', new Uint8Array([byte]));
      log.write('stderr', bytesOf('.'));
    }
    log.write('stdout', new Uint8Array([0xe2])); // a character the command never finished
    const events = await all();
    expect(joined(events, 'stdout')).toEqual(Buffer.concat([Buffer.from(text), Buffer.from([0xe2])]));
    const stdout = events.flatMap((event) =>
      event.event === 'output' && event.data.stream === 'stdout' ? [event.data] : [],
    );
    expect(stdout.map((chunk) => chunk.encoding)).toEqual([
      ...stdout.slice(0, -1).map(() => 'utf-8'),
      'base64',
    ]);
    expect(decode(stdout.at(-1) as { encoding: string; data: string })).toEqual(Buffer.from([0xe2]));
  });

  test('binary output is base64, a large one cut into chunks of at most 64 KiB, text never mid-character', async () => {
    const binary = new Uint8Array(200_000).map((_, i) => (i * 7) % 256);
    const text = bytesOf('€'.repeat(50_000)); // 150,000 bytes: 65,536 is no multiple of 3
    const { log, all } = recorded();
    log.write('stdout', binary.subarray(0, 70_000));
    log.write('stdout', binary.subarray(70_000));
    log.write('stderr', text);
    const events = await all();
    expect(joined(events, 'stdout')).toEqual(Buffer.from(binary));
    expect(joined(events, 'stderr')).toEqual(Buffer.from(text));
    const stderr = events.filter((event) => event.event === 'output' && event.data.stream === 'stderr');
    expect(stderr.length).toBeGreaterThanOrEqual(3);
    for (const event of stderr) expect(event.event === 'output' && event.data.encoding).toBe('utf-8');
  });

  test('bytes past the cap are not logged: the log holds what the result holds', async () => {
    const { log, all } = recorded(5);
    log.write('stdout', bytesOf('abc'));
    log.write('stdout', bytesOf('defgh'));
    log.write('stderr', bytesOf('0123456789'));
    const events = await all();
    expect(joined(events, 'stdout').toString()).toBe('abcde');
    expect(joined(events, 'stderr').toString()).toBe('01234');
  });

  test('a slow database never holds up the writer; what it could not append yet comes back from finish, in order', async () => {
    const { log, appended, all } = recorded(1 << 20, 100);
    const started = performance.now();
    for (let i = 0; i < 50; i++) log.write('stdout', bytesOf(`line ${i}\n`));
    expect(performance.now() - started).toBeLessThan(50); // write never waits for an append
    await new Promise((resolve) => setTimeout(resolve, 20));
    log.write('stdout', bytesOf('last\n'));
    const events = await all();
    expect(appended.length).toBeGreaterThanOrEqual(1);
    expect(joined(events, 'stdout').toString()).toBe(
      `${Array.from({ length: 50 }, (_, i) => `line ${i}\n`).join('')}last\n`,
    );
  });

  test('output reaches the log within the flush interval, without waiting for the command to end', async () => {
    const { log, appended } = recorded();
    log.write('stdout', bytesOf('early\n'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(appended.flat().map((event) => event.event === 'output' && event.data.data)).toEqual(['early\n']);
    await log.finish();
  });

  test('an append that fails is tried again with the next one; a lost claim stops the log', async () => {
    let fail = true;
    let owned = true;
    const appended: OutputEvent[] = [];
    const log = new OutputLog({
      maxBytes: 1000,
      flushMs: 5,
      append: async (events) => {
        if (fail) {
          fail = false;
          throw new Error('statement timeout');
        }
        if (owned) appended.push(...events);
        return owned;
      },
    });
    log.write('stdout', bytesOf('one '));
    await new Promise((resolve) => setTimeout(resolve, 30));
    log.write('stdout', bytesOf('two '));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(joined(appended, 'stdout').toString()).toBe('one two ');
    owned = false;
    log.write('stdout', bytesOf('three'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(log.lost).toBe(true);
    expect(await log.finish()).toEqual([]);
  });
});
