import { describe, expect, test } from 'vitest';
import type { IdSource } from '../src/platform/ids.js';
import {
  createIdFactory,
  ID_PATTERN,
  IdOverflowError,
  idTime,
  isId,
  isName,
  newId,
} from '../src/platform/ids.js';

function fixedSource(times: number[], fill = 0): IdSource {
  let call = 0;
  return {
    now: () => times[Math.min(call++, times.length - 1)] as number,
    random: (digits) => digits.fill(fill),
  };
}

describe('newId', () => {
  test('has the published shape and carries its minting time', () => {
    const before = Date.now();
    const id = newId();
    expect(id).toMatch(ID_PATTERN);
    expect(id).toHaveLength(27);
    expect(idTime(id)).toBeGreaterThanOrEqual(before);
    expect(idTime(id)).toBeLessThanOrEqual(Date.now());
  });

  test('10 000 ids minted back to back are unique and strictly increasing (byte order)', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    expect(new Set(ids).size).toBe(ids.length);
    const outOfOrder = ids.findIndex((id, i) => i > 0 && !(ids[i - 1]! < id));
    expect(outOfOrder).toBe(-1);
  });

  test('the random part looks random: every alphabet character shows up in 1000 ids', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => newId().slice(10)).join(''));
    expect(seen.size).toBe(32);
  });
});

describe('createIdFactory', () => {
  test.each([
    ['epoch', 0, '0000000000'],
    ['one ms', 1, '0000000001'],
    ['32 ms', 32, '0000000010'],
    ['2024-11-01T00:00:00Z', Date.UTC(2024, 10, 1), Date.UTC(2024, 10, 1).toString(32).padStart(10, '0')],
  ])('time prefix: %s', (_name, time, want) => {
    const mint = createIdFactory(fixedSource([time]));
    // toString(32) uses 0-9a-v; map it onto Crockford's alphabet for the expectation.
    const crockford = want.replace(
      /[a-v]/g,
      (c) => '0123456789abcdefghjkmnpqrstvwxyz'[Number.parseInt(c, 32)]!,
    );
    expect(mint().slice(0, 10)).toBe(crockford);
  });

  test.each([
    ['same millisecond', [5, 5, 5]],
    ['clock steps back', [9, 3, 1]],
  ])('monotonic when the %s: increments the random part', (_name, times) => {
    const mint = createIdFactory(fixedSource(times, 30));
    const a = mint();
    const b = mint();
    const c = mint();
    expect(a.slice(0, 10)).toBe(b.slice(0, 10));
    expect(b.slice(0, 10)).toBe(c.slice(0, 10));
    expect(a.slice(-2)).toBe('yy');
    expect(b.slice(-2)).toBe('yz');
    expect(c.slice(-2)).toBe('z0');
  });

  test('a new millisecond draws a new random part', () => {
    const mint = createIdFactory(fixedSource([5, 6], 7));
    mint();
    expect(mint()).toBe(`0000000006${'7'.repeat(17)}`);
  });

  test('overflowing 85 bits within one millisecond throws IdOverflowError', () => {
    const mint = createIdFactory(fixedSource([5, 5], 31));
    mint();
    expect(() => mint()).toThrow(IdOverflowError);
  });

  test.each([-1, 1.5, 32 ** 10])('refuses time %s', (time) => {
    expect(() => createIdFactory(fixedSource([time]))()).toThrow(RangeError);
  });
});

describe('isId and isName', () => {
  const id = newId();
  test.each([
    ['a minted id', id, { isId: true, isName: false }],
    ['27 chars of the alphabet', 'abcdefghjkmnpqrstvwxyz01234', { isId: true, isName: false }],
    ['26 chars', id.slice(1), { isId: false, isName: true }],
    ['28 chars', `${id}0`, { isId: false, isName: true }],
    ['27 chars with an i', `i${id.slice(1)}`, { isId: false, isName: true }],
    ['27 chars with a hyphen', `${id.slice(0, 13)}-${id.slice(14)}`, { isId: false, isName: true }],
    ['uppercase id', id.toUpperCase(), { isId: false, isName: false }],
    ['a', 'a', { isId: false, isName: true }],
    ['web-1', 'web-1', { isId: false, isName: true }],
    ['digits only', '123', { isId: false, isName: true }],
    ['63 chars', 'a'.repeat(63), { isId: false, isName: true }],
    ['64 chars', 'a'.repeat(64), { isId: false, isName: false }],
    ['empty', '', { isId: false, isName: false }],
    ['leading hyphen', '-web', { isId: false, isName: false }],
    ['trailing hyphen', 'web-', { isId: false, isName: false }],
    ['uppercase', 'Web', { isId: false, isName: false }],
    ['underscore', 'web_1', { isId: false, isName: false }],
    ['dot', 'sim.fail', { isId: false, isName: false }],
    ['trailing newline', 'web\n', { isId: false, isName: false }],
    ['unicode', 'wéb', { isId: false, isName: false }],
  ])('%s', (_name, value, want) => {
    expect({ isId: isId(value), isName: isName(value) }).toEqual(want);
  });

  test('idTime is undefined for a non-id', () => {
    expect(idTime('web-1')).toBeUndefined();
  });
});
